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

LogicalResult StopWhenOp::verify() {
  if (failed(verifyStopWhen(*this)))
    return failure();
  if (getDomain().getComponents().empty())
    return emitOpError("needs a domain of at least one dim (the last is the one it stops)");
  return success();
}

/// An island reads its operands at points or through unit-step slices; a
/// body block argument takes its operand's type, with one leading axis per
/// slice component (its symbolic length, which sdg-fuse writes and C++ does
/// not simplify, so only the rank, the trailing shape and the element type are
/// checked here). Every body op has the island's domain and reads at the
/// identity dependence, and the yield gives the results' types.
LogicalResult IslandOp::verify() {
  if (failed(verifyCommon(*this, true)))
    return failure();
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body has ") << body.getNumArguments() << " arguments but the island has "
                                    << getInputs().size() << " operands";
  for (auto [i, dep] : llvm::enumerate(getDeps())) {
    size_t slices = 0;
    for (StringAttr c : llvm::cast<IndexAttr>(dep).getComponents()) {
      size_t colons = llvm::count(c.getValue(), ':');
      if (colons > 1)
        return emitOpError("operand ") << i << " reads a strided slice (" << c.getValue()
                                       << "): an island reads points or unit-step slices";
      slices += colons;
    }
    Type argType = body.getArgument(i).getType();
    Type operandType = getInputs()[i].getType();
    if (slices == 0) {
      if (argType != operandType)
        return emitOpError("body argument ") << i << " has type " << argType
                                             << ", which differs from operand " << i << "'s " << operandType;
      continue;
    }
    auto arg = llvm::dyn_cast<::tidal::TensorType>(argType);
    auto operand = llvm::cast<::tidal::TensorType>(operandType);
    if (!arg || arg.getElementType() != operand.getElementType() ||
        arg.getRank() != operand.getRank() + slices ||
        !llvm::equal(arg.getShape().drop_front(slices), operand.getShape()))
      return emitOpError("body argument ") << i << " has type " << argType << ", but operand " << i
                                           << " (" << operandType << ") read through " << slices
                                           << " slice(s) gives " << slices << " leading axes, then its shape";
  }
  IndexAttr domain = getDomain();
  auto text = [](IndexAttr index) {
    std::string out = "[";
    for (auto [i, c] : llvm::enumerate(index.getComponents()))
      out += (i ? ", " : "") + c.getValue().str();
    return out + "]";
  };
  for (Operation &inner : body) {
    if (llvm::isa<YieldOp>(inner))
      continue;
    auto innerDomain = inner.getAttrOfType<IndexAttr>("domain");
    if (!innerDomain || innerDomain != domain)
      return inner.emitOpError("is in an island over domain ")
             << text(domain) << " and must have that domain";
    auto deps = inner.getAttrOfType<ArrayAttr>("deps");
    if (!deps)
      continue;
    for (auto [i, dep] : llvm::enumerate(deps))
      if (llvm::cast<IndexAttr>(dep).getComponents() != domain.getComponents())
        return inner.emitOpError("operand ") << i << " is read at " << text(llvm::cast<IndexAttr>(dep))
                                             << " inside an island: body ops read at the identity";
  }
  auto yield = body.empty() ? YieldOp() : llvm::dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError("body must end with sdg.yield");
  if (!llvm::equal(yield.getValues().getTypes(), getResultTypes()))
    return emitOpError("yields ") << yield.getValues().size()
                                  << " values whose types differ from the island's results";
  return success();
}
