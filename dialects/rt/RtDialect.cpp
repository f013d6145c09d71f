//===- RtDialect.cpp - the rt dialect ------------------------------------===//
#include "rt/RtDialect.h"
#include "common/TensorOpVerifiers.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace tidal;
using namespace rt;

#include "RtDialect.cpp.inc"

void RtDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "RtOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "RtOps.cpp.inc"

LogicalResult ProgramOp::verify() { return verifyDims(*this); }

/// The size of the domain of the op that defines `v`, if it declares one.
static std::optional<size_t> domainSize(Value v) {
  if (Operation *def = v.getDefiningOp())
    if (auto domain = def->getAttrOfType<IndexAttr>("domain"))
      return domain.size();
  return std::nullopt;
}

static LogicalResult verifyIndexComponents(Operation *op, Value source, IndexAttr index,
                                           StringRef what) {
  std::optional<size_t> n = domainSize(source);
  if (n && *n != index.size())
    return op->emitOpError(what) << " has " << index.size()
                                 << " components but the indexed tensor's domain has " << *n
                                 << " dimensions";
  for (StringAttr c : index.getComponents())
    if (failed(verifySymbolsInScope(op, c.getValue(), what)))
      return failure();
  return success();
}

LogicalResult DefineOp::verify() {
  if (!getTarget().getDefiningOp<RecurrentOp>())
    return emitOpError("target must be declared by rt.recurrent");
  if (getTarget().getType() != getValue().getType())
    return emitOpError("value type ") << getValue().getType() << " differs from the target type "
                                      << getTarget().getType();
  for (StringAttr c : getIndex().getComponents())
    if (c.getValue().contains(':'))
      return emitOpError("a definition case indexes points, not slices: '") << c.getValue() << "'";
  if (failed(verifyIndexComponents(*this, getTarget(), getIndex(), "definition index")))
    return failure();
  if (auto cond = getCondAttr())
    return verifySymbolsInScope(*this, cond.getText().getValue(), "condition");
  return success();
}

LogicalResult IndexOp::verify() {
  if (failed(verifyCommon(*this, false)))
    return failure();
  return verifyIndexComponents(*this, getSource(), getIndex(), "index");
}
