//===- TidalDialectsModule.cpp - Python extension registering the dialects -===//
//
// Linked against the bindings' libMLIRPythonCAPI.so, so the dialects live in
// the same MLIR as `mlir.ir`: `register_dialects(ctx)` makes `tidal`, `rt` and
// `sdg` available to a Python `mlir.ir.Context`. This file is built with RTTI
// (nanobind needs it) and therefore only talks to the dialects through their
// C API (capi/TidalCAPI.h); the dialects themselves are built without RTTI.
//===----------------------------------------------------------------------===//
#include "capi/TidalCAPI.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

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
}
