//===- TidalDialectsModule.cpp - Python extension registering the dialects -===//
//
// Linked against the bindings' libMLIRPythonCAPI.so, so the dialects live in
// the same MLIR as `mlir.ir`: `register_dialects(ctx)` makes `tidal`, `rt` and
// `sdg` available to a Python `mlir.ir.Context`. This file is built with RTTI
// (nanobind needs it) and therefore only talks to the dialects through their
// C API (capi/TidalCAPI.h); the dialects themselves are built without RTTI.
// `dense_raw_data(attr)` reads a dense attribute's storage for element types
// the bindings' buffer protocol lacks (bf16).
//===----------------------------------------------------------------------===//
#include "capi/TidalCAPI.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

#include <stdexcept>

namespace nb = nanobind;

NB_MODULE(_tidal_dialects, m) {
  m.doc() = "Registers Tidal's MLIR dialects (tidal, rt, sdg) into an mlir.ir.Context.";
  m.def(
      "register_dialects",
      [](MlirContext context, bool load) {
        for (MlirDialectHandle h : {mlirGetDialectHandle__tidal__(), mlirGetDialectHandle__rt__(),
                                    mlirGetDialectHandle__sdg__()}) {
          mlirDialectHandleRegisterDialect(h, context);
          if (load)
            mlirDialectHandleLoadDialect(h, context);
        }
      },
      nb::arg("context").none() = nb::none(), nb::arg("load") = true,
      "Registers (and by default loads) the tidal, rt and sdg dialects in `context` "
      "(the current context if None).");
  m.def(
      "dense_raw_data",
      [](MlirAttribute attr) {
        if (!mlirAttributeIsADenseElements(attr))
          throw nb::type_error("dense_raw_data: not a DenseElementsAttr");
        MlirType element = mlirShapedTypeGetElementType(mlirAttributeGetType(attr));
        unsigned bits = mlirTypeIsAFloat(element)     ? mlirFloatTypeGetWidth(element)
                        : mlirTypeIsAInteger(element) ? mlirIntegerTypeGetWidth(element)
                                                      : 0;
        if (bits == 0 || bits % 8 != 0)   // i1 is bit-packed; index, complex: not Tidal's
          throw nb::value_error("dense_raw_data: elements of a whole number of bytes only");
        size_t count = mlirDenseElementsAttrIsSplat(attr)
                           ? 1
                           : static_cast<size_t>(mlirElementsAttrGetNumElements(attr));
        return nb::bytes(static_cast<const char *>(mlirDenseElementsAttrGetRawData(attr)),
                         count * (bits / 8));
      },
      nb::arg("attr"),
      "The little-endian bytes a DenseElementsAttr stores: one element if it is a splat, "
      "else every element in row-major order.");
}
