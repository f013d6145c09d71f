//===- TidalDialect.cpp - the tidal base dialect -------------------------===//
#include "common/TidalDialect.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tidal;

#include "TidalDialect.cpp.inc"
#include "TidalEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "TidalAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "TidalTypes.cpp.inc"

void TidalDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "TidalAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "TidalTypes.cpp.inc"
      >();
}

LogicalResult tidal::TensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<StringAttr> shape, Type elementType) {
  if (!elementType.isIntOrIndexOrFloat())
    return emitError() << "element type must be an integer, index or float type, got "
                       << elementType;
  for (StringAttr dim : shape) {
    StringRef text = dim.getValue();
    if (text.contains(':'))
      return emitError() << "shape dimension '" << text << "' must be an expression, not a slice";
    if (std::optional<int64_t> v = asInteger(text); v && *v < 0)
      return emitError() << "shape dimension must be non-negative, got " << *v;
  }
  return success();
}

std::optional<int64_t> tidal::TensorType::getStaticDim(size_t i) const {
  return asInteger(getShape()[i].getValue());
}
