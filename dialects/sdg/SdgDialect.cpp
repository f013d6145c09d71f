//===- SdgDialect.cpp - the sdg dialect ----------------------------------===//
#include "sdg/SdgDialect.h"
#include "common/TensorOpVerifiers.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace tidal;
using namespace sdg;

#include "SdgDialect.cpp.inc"

void SdgDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "SdgOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "SdgOps.cpp.inc"

RegionKind GraphOp::getRegionKind(unsigned) { return RegionKind::Graph; }

LogicalResult GraphOp::verify() { return verifyDims(*this); }

LogicalResult MergeOp::verify() {
  if (failed(verifyCommon(*this, true)))
    return failure();
  if (getInputs().empty())
    return emitOpError("needs at least one branch");
  if (getConds().size() != getInputs().size())
    return emitOpError("needs one condition per branch");
  for (auto [i, v] : llvm::enumerate(getInputs()))
    if (v.getType() != getResult().getType())
      return emitOpError("branch ") << i << " has type " << v.getType()
                                    << ", which differs from the result type " << getResult().getType();
  for (Attribute c : getConds())
    if (failed(verifySymbolsInScope(*this, llvm::cast<ExprAttr>(c).getText().getValue(), "condition")))
      return failure();
  return success();
}

LogicalResult OutputOp::verify() { return verifyCommon(*this, false); }
