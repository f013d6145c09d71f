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

/// An island reads its operands at points (no slice components); its body's
/// block arguments take the operands' types, every body op has the island's
/// domain and reads at the identity dependence, and the yield gives the
/// results' types.
LogicalResult IslandOp::verify() {
  if (failed(verifyCommon(*this, true)))
    return failure();
  for (auto [i, dep] : llvm::enumerate(getDeps()))
    for (StringAttr c : llvm::cast<IndexAttr>(dep).getComponents())
      if (c.getValue().contains(':'))
        return emitOpError("operand ") << i << " reads a slice (" << c.getValue()
                                       << "): an island reads its operands at points";
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body has ") << body.getNumArguments() << " arguments but the island has "
                                    << getInputs().size() << " operands";
  for (auto [i, pair] : llvm::enumerate(llvm::zip(body.getArguments(), getInputs())))
    if (std::get<0>(pair).getType() != std::get<1>(pair).getType())
      return emitOpError("body argument ") << i << " has type " << std::get<0>(pair).getType()
                                           << ", which differs from operand " << i << "'s "
                                           << std::get<1>(pair).getType();
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
