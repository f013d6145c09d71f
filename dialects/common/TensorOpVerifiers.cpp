//===- TensorOpVerifiers.cpp - verifiers shared by rt and sdg ------------===//
#include "common/TensorOpVerifiers.h"
#include "common/TidalDialect.h"

#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace tidal {
namespace {

/// What an operator sees of an operand: in sdg, every slice component of the
/// operand's dependence expression prepends a dimension whose size is the
/// slice's (symbolic) length. Such sizes are `?` here: C++ cannot simplify
/// them, and `sdg-verify-dependences` checks them exactly.
struct View {
  SmallVector<StringRef> dims;
  Type elementType;
  size_t rank() const { return dims.size(); }
};

constexpr StringRef kUnknown = "?";

bool sameDim(StringRef a, StringRef b) { return a == b || a == kUnknown || b == kUnknown; }

View viewOfType(Type type) {
  auto t = llvm::cast<TensorType>(type);
  View v;
  for (StringAttr d : t.getShape())
    v.dims.push_back(d.getValue());
  v.elementType = t.getElementType();
  return v;
}

View operandView(Operation *op, unsigned i, bool withDeps) {
  View v = viewOfType(op->getOperand(i).getType());
  if (!withDeps)
    return v;
  auto deps = op->getAttrOfType<ArrayAttr>("deps");
  if (!deps || i >= deps.size())
    return v;
  size_t slices = llvm::count_if(llvm::cast<IndexAttr>(deps[i]).getComponents(),
                                 [](StringAttr c) { return c.getValue().contains(':'); });
  v.dims.insert(v.dims.begin(), slices, kUnknown);
  return v;
}

View resultView(Operation *op) { return viewOfType(op->getResult(0).getType()); }

bool sameDims(const View &a, const View &b) {
  if (a.rank() != b.rank())
    return false;
  for (size_t i = 0; i < a.rank(); ++i)
    if (!sameDim(a.dims[i], b.dims[i]))
      return false;
  return true;
}

/// The (steps, bounds) of the enclosing rt.program / sdg.graph.
LogicalResult enclosingDims(Operation *op, SmallVectorImpl<StringRef> &steps,
                            SmallVectorImpl<StringRef> &bounds) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
    auto s = p->getAttrOfType<ArrayAttr>("steps");
    auto b = p->getAttrOfType<ArrayAttr>("bounds");
    if (!s || !b)
      continue;
    for (Attribute a : s)
      steps.push_back(llvm::cast<StringAttr>(a).getValue());
    for (Attribute a : b)
      bounds.push_back(llvm::cast<StringAttr>(a).getValue());
    return success();
  }
  return op->emitOpError("must be nested in an rt.program or sdg.graph that declares its dims");
}

} // namespace

LogicalResult verifyCommon(Operation *op, bool withDeps) {
  SmallVector<StringRef> steps, bounds;
  if (failed(enclosingDims(op, steps, bounds)))
    return failure();
  if (auto domain = op->getAttrOfType<IndexAttr>("domain")) {
    llvm::SmallSet<StringRef, 4> seen;
    for (StringAttr c : domain.getComponents()) {
      StringRef d = c.getValue();
      if (!isIdentifier(d) || !llvm::is_contained(steps, d))
        return op->emitOpError("domain component '")
               << d << "' is not a temporal dimension of the enclosing program (declared: "
               << llvm::join(steps, ", ") << ")";
      if (!seen.insert(d).second)
        return op->emitOpError("domain lists dimension '") << d << "' twice";
    }
  }
  for (Value r : op->getResults())
    for (StringAttr dim : llvm::cast<TensorType>(r.getType()).getShape())
      if (failed(verifySymbolsInScope(op, dim.getValue(), "result shape")))
        return failure();
  if (withDeps) {
    auto deps = op->getAttrOfType<ArrayAttr>("deps");
    if (!deps || deps.size() != op->getNumOperands())
      return op->emitOpError("has ")
             << op->getNumOperands() << " operands but "
             << (deps ? deps.size() : 0) << " dependence expressions";
  }
  return success();
}

namespace {

LogicalResult arity(Operation *op, unsigned n) {
  if (op->getNumOperands() != n)
    return op->emitOpError("expects ") << n << " operands, got " << op->getNumOperands();
  return success();
}

LogicalResult dimInRange(Operation *op, int64_t dim, size_t rank, bool inclusive = false) {
  if (dim < 0 || static_cast<size_t>(dim) > rank || (!inclusive && static_cast<size_t>(dim) == rank))
    return op->emitOpError("dimension ") << dim << " is out of range for rank " << rank;
  return success();
}

int64_t dimAttr(Operation *op) { return op->getAttrOfType<IntegerAttr>("dim").getInt(); }

bool isBool(Type t) { return t.isInteger(1); }

LogicalResult sameShape(Operation *op, const View &a, const View &b, StringRef what) {
  if (!sameDims(a, b))
    return op->emitOpError(what) << " shape must equal the operand's";
  return success();
}

/// NumPy broadcasting of symbolic shapes (equal text or a static 1).
LogicalResult broadcast(Operation *op, ArrayRef<View> ins, const View &result) {
  size_t rank = 0;
  for (const View &v : ins)
    rank = std::max(rank, v.rank());
  if (result.rank() != rank)
    return op->emitOpError("result rank ") << result.rank() << " does not match broadcast rank " << rank;
  for (size_t i = 0; i < rank; ++i) {
    StringRef out = result.dims[rank - 1 - i];
    for (const View &v : ins) {
      if (i >= v.rank())
        continue;
      StringRef d = v.dims[v.rank() - 1 - i];
      if (!sameDim(d, out) && d != "1")
        return op->emitOpError("operand dimension '")
               << d << "' cannot broadcast to result dimension '" << out << "'";
    }
  }
  return success();
}

LogicalResult integerIndex(Operation *op, const View &index) {
  if (!llvm::isa<IntegerType, IndexType>(index.elementType))
    return op->emitOpError("index operand must have an integer element type");
  return success();
}

} // namespace

LogicalResult verifySymbolsInScope(Operation *op, StringRef text, StringRef what) {
  SmallVector<StringRef> steps, bounds;
  if (failed(enclosingDims(op, steps, bounds)))
    return failure();
  SmallVector<StringRef> allowed(bounds);
  if (auto domain = op->getAttrOfType<IndexAttr>("domain"))
    for (StringAttr c : domain.getComponents())
      allowed.push_back(c.getValue());
  else
    allowed.append(steps.begin(), steps.end());
  for (StringRef s : symbolsOf(text))
    if (!llvm::is_contained(allowed, s))
      return op->emitOpError(what) << " '" << text << "' uses '" << s
                                   << "', which is neither a step of the op's domain nor a bound";
  return success();
}

LogicalResult verifyDims(Operation *op) {
  auto steps = op->getAttrOfType<ArrayAttr>("steps");
  auto bounds = op->getAttrOfType<ArrayAttr>("bounds");
  if (steps.size() != bounds.size())
    return op->emitOpError("needs one bound per step");
  llvm::SmallSet<StringRef, 8> seen;
  for (Attribute a : llvm::concat<const Attribute>(steps, bounds)) {
    StringRef name = llvm::cast<StringAttr>(a).getValue();
    if (!isIdentifier(name) || !symbolsOf(name).size())
      return op->emitOpError("'") << name << "' is not a valid dimension name";
    if (!seen.insert(name).second)
      return op->emitOpError("dimension name '") << name << "' is used twice";
  }
  auto derived = op->getAttrOfType<ArrayAttr>("derived");
  if (!derived || derived.empty())
    return success();
  if (derived.size() != bounds.size())
    return op->emitOpError("needs one derived-bound text per dim (empty for a bound the run gives), got ")
           << derived.size() << " for " << bounds.size() << " dims";
  llvm::SmallVector<StringRef> given;
  for (auto [b, d] : llvm::zip(bounds, derived))
    if (llvm::cast<StringAttr>(d).getValue().empty())
      given.push_back(llvm::cast<StringAttr>(b).getValue());
  for (auto [b, d] : llvm::zip(bounds, derived))
    for (StringRef s : symbolsOf(llvm::cast<StringAttr>(d).getValue()))
      if (!llvm::is_contained(given, s))
        return op->emitOpError("derived bound '")
               << llvm::cast<StringAttr>(b).getValue() << " = " << llvm::cast<StringAttr>(d).getValue()
               << "' uses '" << s << "', which is not a bound the run gives";
  return success();
}

LogicalResult verifyOutput(Operation *op) {
  if (failed(verifyCommon(op, false)))
    return failure();
  if (auto cond = op->getAttrOfType<ExprAttr>("cond"))
    return verifySymbolsInScope(op, cond.getText().getValue(), "condition");
  return success();
}

LogicalResult verifyStopWhen(Operation *op) {
  if (failed(verifyCommon(op, false)))
    return failure();
  if (op->getNumOperands() != 1)
    return op->emitOpError("expects 1 operand, got ") << op->getNumOperands();
  View c = viewOfType(op->getOperand(0).getType());
  if (c.rank() != 0 || !c.elementType.isInteger(1))
    return op->emitOpError("condition must be a boolean scalar (shape [], i1)");
  return success();
}

// Operand `i` as the operator sees it.
#define IN(i) operandView(op, i, withDeps)

LogicalResult verifyUnary(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 1)))
    return failure();
  View in = IN(0), r = resultView(op);
  if (in.elementType != r.elementType)
    return op->emitOpError("result element type must equal the operand's");
  return sameShape(op, r, in, "result");
}

LogicalResult verifyBinary(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 2)))
    return failure();
  View a = IN(0), b = IN(1), r = resultView(op);
  if (a.elementType != b.elementType)
    return op->emitOpError("operand element types differ (")
           << a.elementType << " vs " << b.elementType << "): insert a cast";
  auto kind = op->getAttrOfType<IntegerAttr>("kind").getInt();
  bool predicate = kind >= static_cast<int64_t>(BinaryKind::eq) &&
                   kind <= static_cast<int64_t>(BinaryKind::ge);
  Type expected = predicate ? IntegerType::get(op->getContext(), 1) : a.elementType;
  if (r.elementType != expected)
    return op->emitOpError("result element type must be ") << expected;
  return broadcast(op, {a, b}, r);
}

LogicalResult verifyWhere(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 3)))
    return failure();
  View c = IN(0), a = IN(1), b = IN(2), r = resultView(op);
  if (!isBool(c.elementType))
    return op->emitOpError("condition must have element type i1");
  if (a.elementType != b.elementType || a.elementType != r.elementType)
    return op->emitOpError("branches and result must share one element type");
  return broadcast(op, {c, a, b}, r);
}

LogicalResult verifyReduce(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 1)))
    return failure();
  View in = IN(0), r = resultView(op);
  ArrayRef<int64_t> dims = op->getAttrOfType<DenseI64ArrayAttr>("dims").asArrayRef();
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t d : dims) {
    if (failed(dimInRange(op, d, in.rank())))
      return failure();
    if (!seen.insert(d).second)
      return op->emitOpError("reduces dimension ") << d << " twice";
  }
  size_t expected = op->hasAttr("keepdim") ? in.rank() : in.rank() - dims.size();
  if (r.rank() != expected)
    return op->emitOpError("result rank must be ") << expected;
  auto kind = static_cast<ReduceKind>(op->getAttrOfType<IntegerAttr>("kind").getInt());
  if (kind == ReduceKind::argmax || kind == ReduceKind::argmin) {
    if (dims.size() != 1)
      return op->emitOpError(stringifyReduceKind(kind)) << " reduces exactly one dimension";
    if (!r.elementType.isInteger(64))
      return op->emitOpError(stringifyReduceKind(kind)) << " result element type must be i64";
  }
  return success();
}

LogicalResult verifyShapePreservingDimOp(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 1)))
    return failure();
  View in = IN(0);
  if (failed(dimInRange(op, dimAttr(op), in.rank())))
    return failure();
  return sameShape(op, resultView(op), in, "result");
}

LogicalResult verifyLinearScan(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 2)))
    return failure();
  View a = IN(0), b = IN(1), r = resultView(op);
  if (failed(dimInRange(op, dimAttr(op), b.rank())))
    return failure();
  if (!llvm::isa<FloatType>(b.elementType))
    return op->emitOpError("operands must have a floating-point element type, got ") << b.elementType;
  if (a.elementType != b.elementType || r.elementType != b.elementType)
    return op->emitOpError("operands and result must have the same element type");
  if (failed(sameShape(op, a, b, "coefficient")))
    return failure();
  return sameShape(op, r, b, "result");
}

LogicalResult verifyArgsort(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 1)))
    return failure();
  View in = IN(0), r = resultView(op);
  if (failed(dimInRange(op, dimAttr(op), in.rank())))
    return failure();
  if (!r.elementType.isInteger(64))
    return op->emitOpError("result element type must be i64");
  return sameShape(op, r, in, "result");
}

LogicalResult verifyMatmul(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 2)))
    return failure();
  View a = IN(0), b = IN(1);
  if (a.rank() == 0 || b.rank() == 0)
    return op->emitOpError("operands must have rank >= 1");
  StringRef ka = a.dims.back();
  StringRef kb = b.rank() == 1 ? b.dims[0] : b.dims[b.rank() - 2];
  if (!sameDim(ka, kb))
    return op->emitOpError("contracted dimensions differ: '") << ka << "' vs '" << kb << "'";
  if (a.elementType != b.elementType || a.elementType != resultView(op).elementType)
    return op->emitOpError("operands and result must share one element type");
  return success();
}

/// The element count of a fully static view.
static std::optional<int64_t> staticCount(const View &v) {
  int64_t n = 1;
  for (StringRef d : v.dims) {
    std::optional<int64_t> size = asInteger(d);
    if (!size)
      return std::nullopt;
    n *= *size;
  }
  return n;
}

LogicalResult verifyReshape(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 1)))
    return failure();
  std::optional<int64_t> a = staticCount(IN(0)), b = staticCount(resultView(op));
  if (a && b && *a != *b)
    return op->emitOpError("cannot reshape ") << *a << " elements into " << *b;
  return success();
}

LogicalResult verifyPermute(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 1)))
    return failure();
  View in = IN(0), r = resultView(op);
  ArrayRef<int64_t> perm = op->getAttrOfType<DenseI64ArrayAttr>("perm").asArrayRef();
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  bool isPerm = sorted.size() == in.rank();
  for (size_t i = 0; isPerm && i < sorted.size(); ++i)
    isPerm = sorted[i] == static_cast<int64_t>(i);
  if (!isPerm)
    return op->emitOpError("perm must be a permutation of the operand's ") << in.rank() << " dimensions";
  if (r.rank() != in.rank())
    return op->emitOpError("result rank must equal the operand's");
  for (size_t i = 0; i < perm.size(); ++i)
    if (!sameDim(r.dims[i], in.dims[perm[i]]))
      return op->emitOpError("result dimension ") << i << " must be operand dimension " << perm[i];
  return success();
}

LogicalResult verifyExpand(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 1)))
    return failure();
  View in = IN(0), r = resultView(op);
  if (r.rank() < in.rank())
    return op->emitOpError("cannot expand rank ") << in.rank() << " to the lower rank " << r.rank();
  View aligned = in;
  aligned.dims.insert(aligned.dims.begin(), r.rank() - in.rank(), "1");
  return broadcast(op, {aligned}, r);
}

LogicalResult verifySqueeze(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 1)))
    return failure();
  View in = IN(0);
  if (failed(dimInRange(op, dimAttr(op), in.rank())))
    return failure();
  if (!sameDim(in.dims[dimAttr(op)], "1"))
    return op->emitOpError("can only squeeze a dimension of size 1");
  if (resultView(op).rank() + 1 != in.rank())
    return op->emitOpError("result rank must be one less than the operand's");
  return success();
}

LogicalResult verifyUnsqueeze(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 1)))
    return failure();
  View in = IN(0);
  if (resultView(op).rank() != in.rank() + 1)
    return op->emitOpError("result rank must be one more than the operand's");
  return dimInRange(op, dimAttr(op), in.rank(), /*inclusive=*/true);
}

LogicalResult verifySlice(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 1)))
    return failure();
  if (failed(dimInRange(op, dimAttr(op), IN(0).rank())))
    return failure();
  return verifySymbolsInScope(op, op->getAttrOfType<ExprAttr>("start").getText().getValue(), "start");
}

LogicalResult verifyTake(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 1)))
    return failure();
  View in = IN(0);
  if (failed(dimInRange(op, dimAttr(op), in.rank())))
    return failure();
  if (resultView(op).rank() + 1 != in.rank())
    return op->emitOpError("result rank must be one less than the operand's");
  return verifySymbolsInScope(op, op->getAttrOfType<ExprAttr>("index").getText().getValue(), "index");
}

LogicalResult verifyIndexSelect(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 2)))
    return failure();
  View src = IN(0), index = IN(1);
  if (failed(dimInRange(op, dimAttr(op), src.rank())))
    return failure();
  if (index.rank() > 1)
    return op->emitOpError("index operand must have rank 0 or 1");
  size_t expected = src.rank() - 1 + index.rank();
  if (resultView(op).rank() != expected)
    return op->emitOpError("result rank must be ") << expected;
  return integerIndex(op, index);
}

LogicalResult verifyGather(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 2)))
    return failure();
  View src = IN(0), idx = IN(1);
  if (failed(dimInRange(op, dimAttr(op), src.rank())))
    return failure();
  if (src.rank() != idx.rank())
    return op->emitOpError("source and index must have the same rank");
  if (!sameDims(resultView(op), idx))
    return op->emitOpError("result shape must equal the index shape");
  return integerIndex(op, idx);
}

LogicalResult verifyScatterAdd(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 3)))
    return failure();
  View dst = IN(0), idx = IN(1), src = IN(2), r = resultView(op);
  if (failed(dimInRange(op, dimAttr(op), dst.rank())))
    return failure();
  if (!sameDims(idx, src))
    return op->emitOpError("index and source must have the same shape");
  if (!sameDims(r, dst) || r.elementType != dst.elementType)
    return op->emitOpError("result type must equal the destination type");
  return integerIndex(op, idx);
}

LogicalResult verifyConcat(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)))
    return failure();
  if (op->getNumOperands() == 0)
    return op->emitOpError("needs at least one operand");
  View first = IN(0);
  int64_t dim = dimAttr(op);
  if (failed(dimInRange(op, dim, first.rank())))
    return failure();
  for (unsigned k = 1; k < op->getNumOperands(); ++k) {
    View v = IN(k);
    if (v.rank() != first.rank() || v.elementType != first.elementType)
      return op->emitOpError("operands must share rank and element type");
    for (size_t i = 0; i < v.rank(); ++i)
      if (static_cast<int64_t>(i) != dim && !sameDim(v.dims[i], first.dims[i]))
        return op->emitOpError("operands differ in dimension ") << i << ", which is not concatenated";
  }
  return success();
}

LogicalResult verifyPad(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 1)))
    return failure();
  if (failed(dimInRange(op, dimAttr(op), IN(0).rank())))
    return failure();
  for (StringRef name : {"before", "after"})
    if (failed(verifySymbolsInScope(op, op->getAttrOfType<ExprAttr>(name).getText().getValue(), name)))
      return failure();
  return success();
}

LogicalResult verifyCast(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)) || failed(arity(op, 1)))
    return failure();
  return sameShape(op, resultView(op), IN(0), "result");
}

#undef IN

LogicalResult verifyUdf(Operation *op, bool withDeps) {
  if (failed(verifyCommon(op, withDeps)))
    return failure();
  if (op->getAttrOfType<StringAttr>("callee").getValue().empty())
    return op->emitOpError("callee name must not be empty");
  return success();
}

LogicalResult verifyConstant(Operation *op, bool) {
  if (failed(verifyCommon(op, false)))
    return failure();
  auto value = llvm::cast<ShapedType>(op->getAttrOfType<ElementsAttr>("value").getType());
  View r = resultView(op);
  if (value.getElementType() != r.elementType)
    return op->emitOpError("value element type ") << value.getElementType()
                                                  << " differs from the result's " << r.elementType;
  bool same = value.getRank() == static_cast<int64_t>(r.rank());
  for (size_t i = 0; same && i < r.rank(); ++i)
    same = asInteger(r.dims[i]) == value.getDimSize(i);
  if (!same)
    return op->emitOpError("value shape must equal the result's static shape");
  return success();
}

LogicalResult verifyParam(Operation *op, bool) {
  if (op->getAttr("value"))
    return verifyConstant(op, false);
  if (failed(verifyCommon(op, false)))
    return failure();
  View r = resultView(op);
  for (size_t i = 0; i < r.rank(); ++i)
    if (!asInteger(r.dims[i]))
      return op->emitOpError("a parameter's shape must be static (dimension ") << i << " is not)";
  return success();
}

LogicalResult verifySource(Operation *op, bool) { return verifyCommon(op, false); }

LogicalResult verifyIota(Operation *op, bool) {
  if (failed(verifyCommon(op, false)))
    return failure();
  return dimInRange(op, dimAttr(op), resultView(op).rank());
}

LogicalResult verifySymbolValue(Operation *op, bool) {
  if (failed(verifyCommon(op, false)))
    return failure();
  if (resultView(op).rank() != 0)
    return op->emitOpError("result must be a scalar tensor");
  return verifySymbolsInScope(op, op->getAttrOfType<ExprAttr>("expr").getText().getValue(), "expression");
}

} // namespace tidal
