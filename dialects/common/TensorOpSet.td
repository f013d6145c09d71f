//===- TensorOpSet.td - the TEMPO tensor operator set, for rt and sdg ----===//
//
// Both dialects carry the same stateless tensor operators. In `rt` they read
// their operands at the current point of their domain; in `sdg` every operand
// is annotated with a dependence expression saying which points of the
// producer it reads (`%x[t - 1]`, `%k[0:t + 1]`). `defm Rt : TidalTensorOps<..>`
// defines `Rt_UnaryOp` etc. Verifiers live in common/TensorOpVerifiers.cpp.
//===----------------------------------------------------------------------===//
#ifndef TIDAL_TENSOR_OP_SET_TD
#define TIDAL_TENSOR_OP_SET_TD

include "common/TidalBase.td"
include "common/TidalEnums.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// One operator. `attrs` are its own attributes, `attrFmt` how they print
// before the operands; `verifier` names the C++ function that checks it.
class TidalTensorOpBase<Dialect d, string mnemonic, bit withDeps, dag attrs,
                        string attrFmt, string verifierFn, list<Trait> traits,
                        string sum, string desc, string rtEx, string sdgEx>
    : Op<d, mnemonic, traits> {
  let summary = sum;
  let description = desc # "\n\nExample:\n\n```mlir\n" # !if(withDeps, sdgEx, rtEx) # "\n```\n";
  let arguments = !con(attrs, (ins Variadic<Tidal_AnyTensor>:$inputs),
                       !if(withDeps, (ins TypedArrayAttrBase<Tidal_IndexAttr, "dependences">:$deps), (ins)),
                       (ins Tidal_IndexAttr:$domain));
  let results = (outs Tidal_AnyTensor:$result);
  let assemblyFormat = attrFmt # !if(!empty(attrFmt), "", " ")
      # !if(withDeps, "custom<DepOperands>($inputs, $deps)", "$inputs")
      # " `domain` custom<Domain>($domain) attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
  let extraClassDefinition = "::llvm::LogicalResult $cppClass::verify() { return ::tidal::"
      # verifierFn # "(getOperation(), " # withDeps # "); }";
}

// An operator with no operands (constants, generators): no dependences.
class TidalSourceOpBase<Dialect d, string mnemonic, dag attrs, string attrFmt,
                        string verifierFn, list<Trait> traits, string sum,
                        string desc, string ex>
    : Op<d, mnemonic, traits> {
  let summary = sum;
  let description = desc # "\n\nExample:\n\n```mlir\n" # ex # "\n```\n";
  let arguments = !con(attrs, (ins Tidal_IndexAttr:$domain));
  let results = (outs Tidal_AnyTensor:$result);
  let assemblyFormat = attrFmt # !if(!empty(attrFmt), "", " ")
      # "`domain` custom<Domain>($domain) attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
  let extraClassDefinition = "::llvm::LogicalResult $cppClass::verify() { return ::tidal::"
      # verifierFn # "(getOperation(), false); }";
}

defvar T4 = "!tidal.tensor<[4], f32>";

multiclass TidalTensorOps<Dialect d, bit withDeps> {
  defvar P = d.name # ".";
  def _UnaryOp : TidalTensorOpBase<d, "unary", withDeps, (ins Tidal_UnaryKind:$kind), "$kind",
      "verifyUnary", [Pure], "elementwise unary function",
      "Applies `kind` (neg, exp, log, tanh, sigmoid, relu, sqrt, ...) elementwise. The result has the operand's type.",
      "%y = " # P # "unary tanh %x domain [t] : (" # T4 # ") -> " # T4,
      "%y = " # P # "unary tanh %x[t] domain [t] : (" # T4 # ") -> " # T4>;
  def _BinaryOp : TidalTensorOpBase<d, "binary", withDeps, (ins Tidal_BinaryKind:$kind), "$kind",
      "verifyBinary", [Pure], "elementwise binary function with broadcasting",
      "Applies `kind` elementwise after NumPy broadcasting of the two operands (shapes align from the right; a dimension of size 1 stretches). Comparisons and logical kinds produce `i1`; the others keep the operands' common element type.",
      "%z = " # P # "binary add %x, %y domain [t] : (" # T4 # ", " # T4 # ") -> " # T4,
      "%z = " # P # "binary add %x[t], %y[t - 1] domain [t] : (" # T4 # ", " # T4 # ") -> " # T4>;
  def _WhereOp : TidalTensorOpBase<d, "where", withDeps, (ins), "",
      "verifyWhere", [Pure], "elementwise selection",
      "`where(c, a, b)` picks `a` where the `i1` condition `c` holds and `b` elsewhere, with broadcasting.",
      "%r = " # P # "where %c, %a, %b domain [] : (!tidal.tensor<[4], i1>, " # T4 # ", " # T4 # ") -> " # T4,
      "%r = " # P # "where %c[], %a[], %b[] domain [] : (!tidal.tensor<[4], i1>, " # T4 # ", " # T4 # ") -> " # T4>;
  def _ReduceOp : TidalTensorOpBase<d, "reduce", withDeps,
      (ins Tidal_ReduceKind:$kind, DenseI64ArrayAttr:$dims, UnitAttr:$keepdim),
      "$kind $dims (`keepdim` $keepdim^)?", "verifyReduce", [Pure], "reduction over spatial dimensions",
      "Reduces the listed spatial dimensions (distinct, in range) with `kind`; with `keepdim` they stay with size 1. `argmax`/`argmin` reduce exactly one dimension to the `i64` position of its first maximal/minimal element (NaN counts as maximal and minimal, as in NumPy).",
      "%s = " # P # "reduce sum [0] %w domain [t] : (!tidal.tensor<[t + 1, 4], f32>) -> " # T4,
      "%s = " # P # "reduce sum [0] %x[0:t + 1] domain [t] : (" # T4 # ") -> " # T4>;
  def _ScanOp : TidalTensorOpBase<d, "scan", withDeps,
      (ins Tidal_ScanKind:$kind, I64Attr:$dim, UnitAttr:$reverse),
      "$kind $dim (`reverse` $reverse^)?", "verifyShapePreservingDimOp", [Pure], "inclusive scan along one dimension",
      "Inclusive scan (cumsum, cumprod, cummax, cummin) along `dim`, from the end with `reverse`. Same type as the operand.",
      "%c = " # P # "scan cumsum 0 %w domain [] : (!tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[T, 4], f32>",
      "%c = " # P # "scan cumsum 0 %x[] domain [] : (!tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[T, 4], f32>">;
  def _LinearScanOp : TidalTensorOpBase<d, "linear_scan", withDeps,
      (ins I64Attr:$dim, UnitAttr:$reverse),
      "$dim (`reverse` $reverse^)?", "verifyLinearScan", [Pure], "first-order linear recurrence along one dimension",
      "`linear_scan(a, b)` along `dim`: `y[k] = b[k] + a[k] * y[k - 1]` with `y[-1] = 0`; with `reverse`, `y[k] = b[k] + a[k] * y[k + 1]` with `y[n] = 0`. Both operands and the result have the same (floating-point) type. A reverse scan with constant `a = gamma` gives discounted returns; a per-element `a` (e.g. `gamma * (1 - done)`) cuts them at episode ends; `a = 1` is a cumulative sum. It is an associative scan, so it runs in O(log n) depth.",
      "%g = " # P # "linear_scan 0 reverse %a, %r domain [] : (!tidal.tensor<[T, 4], f32>, !tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[T, 4], f32>",
      "%g = " # P # "linear_scan 0 reverse %a[], %r[0:T] domain [] : (!tidal.tensor<[T, 4], f32>, !tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[T, 4], f32>">;
  def _ArgsortOp : TidalTensorOpBase<d, "argsort", withDeps, (ins I64Attr:$dim, UnitAttr:$descending),
      "$dim (`descending` $descending^)?", "verifyArgsort", [Pure], "stable sorting permutation along one dimension",
      "The `i64` positions that sort the operand along `dim` (`torch.sort`'s indices): ascending, or descending with `descending`; stable (equal elements keep their order); NaN sorts above every number (last ascending, first descending). The result has the operand's shape.",
      "%i = " # P # "argsort 0 descending %x domain [t] : (" # T4 # ") -> !tidal.tensor<[4], i64>",
      "%i = " # P # "argsort 0 descending %x[t] domain [t] : (" # T4 # ") -> !tidal.tensor<[4], i64>">;
  def _MatmulOp : TidalTensorOpBase<d, "matmul", withDeps, (ins), "",
      "verifyMatmul", [Pure], "matrix product with NumPy semantics",
      "`matmul(a, b)` as `numpy.matmul`: vectors are promoted, leading dimensions broadcast, the contracted dimensions must agree.",
      "%y = " # P # "matmul %x, %w domain [t] : (!tidal.tensor<[3], f32>, !tidal.tensor<[3, 3], f32>) -> !tidal.tensor<[3], f32>",
      "%y = " # P # "matmul %x[t], %w[] domain [t] : (!tidal.tensor<[3], f32>, !tidal.tensor<[3, 3], f32>) -> !tidal.tensor<[3], f32>">;
  def _ReshapeOp : TidalTensorOpBase<d, "reshape", withDeps, (ins), "",
      "verifyReshape", [Pure], "reshape to the result's (symbolic) shape",
      "Reinterprets the operand with the result type's shape; when both shapes are static their element counts must agree.",
      "%r = " # P # "reshape %x domain [] : (!tidal.tensor<[2, 2], f32>) -> " # T4,
      "%r = " # P # "reshape %x[] domain [] : (!tidal.tensor<[2, 2], f32>) -> " # T4>;
  def _PermuteOp : TidalTensorOpBase<d, "permute", withDeps, (ins DenseI64ArrayAttr:$perm), "$perm",
      "verifyPermute", [Pure], "permutation of dimensions",
      "Result dimension `i` is operand dimension `perm[i]`; `perm` is a permutation of the operand's dimensions.",
      "%r = " # P # "permute [1, 0] %x domain [] : (!tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[3, 2], f32>",
      "%r = " # P # "permute [1, 0] %x[] domain [] : (!tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[3, 2], f32>">;
  def _ExpandOp : TidalTensorOpBase<d, "expand", withDeps, (ins), "",
      "verifyExpand", [Pure], "broadcast to the result's (symbolic) shape",
      "Broadcasts the operand to the result shape: new leading dimensions may be added and dimensions of size 1 stretched.",
      "%r = " # P # "expand %x domain [t] : (!tidal.tensor<[1, 4], f32>) -> !tidal.tensor<[t + 1, 4], f32>",
      "%r = " # P # "expand %x[] domain [t] : (!tidal.tensor<[1, 4], f32>) -> !tidal.tensor<[t + 1, 4], f32>">;
  def _SqueezeOp : TidalTensorOpBase<d, "squeeze", withDeps, (ins I64Attr:$dim), "$dim",
      "verifySqueeze", [Pure], "remove a dimension of size 1", "Removes dimension `dim`, whose size must be 1.",
      "%r = " # P # "squeeze 0 %x domain [] : (!tidal.tensor<[1, 4], f32>) -> " # T4,
      "%r = " # P # "squeeze 0 %x[] domain [] : (!tidal.tensor<[1, 4], f32>) -> " # T4>;
  def _UnsqueezeOp : TidalTensorOpBase<d, "unsqueeze", withDeps, (ins I64Attr:$dim), "$dim",
      "verifyUnsqueeze", [Pure], "insert a dimension of size 1", "Inserts a dimension of size 1 at position `dim`.",
      "%r = " # P # "unsqueeze 0 %x domain [] : (" # T4 # ") -> !tidal.tensor<[1, 4], f32>",
      "%r = " # P # "unsqueeze 0 %x[] domain [] : (" # T4 # ") -> !tidal.tensor<[1, 4], f32>">;
  def _FlipOp : TidalTensorOpBase<d, "flip", withDeps, (ins I64Attr:$dim), "$dim",
      "verifyShapePreservingDimOp", [Pure], "reverse along one dimension", "Reverses the order of elements along `dim`.",
      "%r = " # P # "flip 0 %x domain [] : (" # T4 # ") -> " # T4,
      "%r = " # P # "flip 0 %x[] domain [] : (" # T4 # ") -> " # T4>;
  def _SliceOp : TidalTensorOpBase<d, "slice", withDeps, (ins I64Attr:$dim, Tidal_ExprAttr:$start),
      "$dim `at` $start", "verifySlice", [Pure], "spatial slice with a symbolic start",
      "Takes `result.shape[dim]` elements along `dim` from the symbolic offset `start`.",
      "%r = " # P # "slice 0 at <t> %k domain [t] : (!tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[2, 4], f32>",
      "%r = " # P # "slice 0 at <t> %k[] domain [t] : (!tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[2, 4], f32>">;
  def _TakeOp : TidalTensorOpBase<d, "take", withDeps, (ins I64Attr:$dim, Tidal_ExprAttr:$index),
      "$dim `at` $index", "verifyTake", [Pure], "spatial indexing with a symbolic index (numpy.take)",
      "Selects position `index` (a symbolic expression, e.g. `t`) along `dim`, removing that dimension.",
      "%r = " # P # "take 0 at <t> %c domain [t] : (!tidal.tensor<[T, 4], f32>) -> " # T4,
      "%r = " # P # "take 0 at <t> %c[] domain [t] : (!tidal.tensor<[T, 4], f32>) -> " # T4>;
  def _IndexSelectOp : TidalTensorOpBase<d, "index_select", withDeps, (ins I64Attr:$dim), "$dim",
      "verifyIndexSelect", [Pure], "indexing with an index tensor",
      "Selects along `dim` the positions held in the integer index tensor (rank 0 removes `dim`, rank 1 replaces it).",
      "%r = " # P # "index_select 0 %e, %i domain [t] : (!tidal.tensor<[10, 4], f32>, !tidal.tensor<[], i64>) -> " # T4,
      "%r = " # P # "index_select 0 %e[], %i[t] domain [t] : (!tidal.tensor<[10, 4], f32>, !tidal.tensor<[], i64>) -> " # T4>;
  def _GatherOp : TidalTensorOpBase<d, "gather", withDeps, (ins I64Attr:$dim), "$dim",
      "verifyGather", [Pure], "gather along a dimension",
      "`torch.gather`: result[..., j, ...] = src[..., index[..., j, ...], ...] along `dim`; the result has the index's shape.",
      "%r = " # P # "gather 1 %s, %i domain [] : (!tidal.tensor<[2, 5], f32>, !tidal.tensor<[2, 1], i64>) -> !tidal.tensor<[2, 1], f32>",
      "%r = " # P # "gather 1 %s[], %i[] domain [] : (!tidal.tensor<[2, 5], f32>, !tidal.tensor<[2, 1], i64>) -> !tidal.tensor<[2, 1], f32>">;
  def _ScatterAddOp : TidalTensorOpBase<d, "scatter_add", withDeps, (ins I64Attr:$dim), "$dim",
      "verifyScatterAdd", [Pure], "scatter-add along a dimension",
      "`torch.scatter_add`: adds src[..., j, ...] into a copy of dst at index[..., j, ...] along `dim`.",
      "%r = " # P # "scatter_add 1 %d, %i, %s domain [] : (!tidal.tensor<[2, 5], f32>, !tidal.tensor<[2, 1], i64>, !tidal.tensor<[2, 1], f32>) -> !tidal.tensor<[2, 5], f32>",
      "%r = " # P # "scatter_add 1 %d[], %i[], %s[] domain [] : (!tidal.tensor<[2, 5], f32>, !tidal.tensor<[2, 1], i64>, !tidal.tensor<[2, 1], f32>) -> !tidal.tensor<[2, 5], f32>">;
  def _ConcatOp : TidalTensorOpBase<d, "concat", withDeps, (ins I64Attr:$dim), "$dim",
      "verifyConcat", [Pure], "concatenation along a dimension",
      "Concatenates one or more operands along `dim`; the other dimensions must agree.",
      "%r = " # P # "concat 0 %a, %b domain [] : (" # T4 # ", " # T4 # ") -> !tidal.tensor<[8], f32>",
      "%r = " # P # "concat 0 %a[], %b[] domain [] : (" # T4 # ", " # T4 # ") -> !tidal.tensor<[8], f32>">;
  def _PadOp : TidalTensorOpBase<d, "pad", withDeps,
      (ins I64Attr:$dim, Tidal_ExprAttr:$before, Tidal_ExprAttr:$after, F64Attr:$value),
      "$dim $before $after `value` $value", "verifyPad", [Pure], "constant padding along a dimension",
      "Pads `dim` with `before` and `after` (symbolic) copies of `value`.",
      "%r = " # P # "pad 0 <0> <2 - t> value 0.0 %w domain [t] : (!tidal.tensor<[t + 1], f32>) -> !tidal.tensor<[3], f32>",
      "%r = " # P # "pad 0 <0> <2 - t> value 0.0 %w[t] domain [t] : (!tidal.tensor<[t + 1], f32>) -> !tidal.tensor<[3], f32>">;
  def _CastOp : TidalTensorOpBase<d, "cast", withDeps, (ins), "",
      "verifyCast", [Pure], "element type conversion",
      "Converts each element to the result's element type (as `numpy.astype`); the shape is unchanged.",
      "%r = " # P # "cast %x domain [] : (!tidal.tensor<[4], i32>) -> " # T4,
      "%r = " # P # "cast %x[] domain [] : (!tidal.tensor<[4], i32>) -> " # T4>;
  def _UdfOp : Op<d, "udf", []> {
    let summary = "user-defined function with external state";
    let description = "Calls the host function registered under `callee` (an environment step, a tokenizer, ...). It may keep external state, so it is never fused, reordered or removed."
        # "\n\nExample:\n\n```mlir\n%o, %r = " # P # "udf \"env.step\"(" # !if(withDeps, "%a[t]", "%a") # ") domain [t] : (!tidal.tensor<[], i64>) -> (" # T4 # ", !tidal.tensor<[], f32>)\n```\n";
    let arguments = !con((ins StrAttr:$callee, Variadic<Tidal_AnyTensor>:$inputs),
                         !if(withDeps, (ins TypedArrayAttrBase<Tidal_IndexAttr, "dependences">:$deps), (ins)),
                         (ins Tidal_IndexAttr:$domain));
    let results = (outs Variadic<Tidal_AnyTensor>:$results);
    let assemblyFormat = "$callee `(` " # !if(withDeps, "custom<DepOperands>($inputs, $deps)", "$inputs")
        # " `)` `domain` custom<Domain>($domain) attr-dict `:` functional-type($inputs, results)";
    let hasVerifier = 1;
    let extraClassDefinition = "::llvm::LogicalResult $cppClass::verify() { return ::tidal::verifyUdf(getOperation(), " # withDeps # "); }";
  }
  def _ConstantOp : TidalSourceOpBase<d, "constant", (ins ElementsAttr:$value), "$value",
      "verifyConstant", [Pure], "dense constant",
      "A constant tensor; the value's shape must equal the (static) result shape.",
      "%c = " # P # "constant dense<[1.0, 2.0]> : tensor<2xf32> domain [] : !tidal.tensor<[2], f32>">;
  def _FullOp : TidalSourceOpBase<d, "full", (ins F64Attr:$value), "$value",
      "verifySource", [Pure], "tensor filled with a value, of a symbolic shape",
      "A tensor of the result's (possibly symbolic) shape filled with `value` (zeros, ones, full).",
      "%z = " # P # "full 0.0 domain [t] : !tidal.tensor<[T - t, 4], f32>">;
  def _IotaOp : TidalSourceOpBase<d, "iota", (ins I64Attr:$dim), "$dim",
      "verifyIota", [Pure], "0, 1, 2, ... along one dimension",
      "Each element holds its position along `dim` (`arange` when the result has rank 1).",
      "%a = " # P # "iota 0 domain [t] : !tidal.tensor<[t + 1], i64>">;
  def _RandomOp : TidalSourceOpBase<d, "random", (ins Tidal_RandomDist:$dist, I64Attr:$seed), "$dist `seed` $seed",
      "verifySource", [], "random tensor",
      "Draws a fresh tensor of the result shape from `dist` at every point of the domain (uniform in [0, 1), standard normal, or fair bernoulli). Not fused, not deduplicated.",
      "%r = " # P # "random normal seed 0 domain [t] : !tidal.tensor<[4], f32>">;
  def _SymbolValueOp : TidalSourceOpBase<d, "symbol_value", (ins Tidal_ExprAttr:$expr), "$expr",
      "verifySymbolValue", [Pure], "the value of a symbolic expression as a scalar tensor",
      "Materialises a symbolic expression (e.g. `i` for a learning-rate schedule `0.99 ** i`) at the current point as a scalar tensor.",
      "%i = " # P # "symbol_value <i> domain [i] : !tidal.tensor<[], i64>">;
}

#endif // TIDAL_TENSOR_OP_SET_TD
