//===- RtOps.td - the rt dialect: recurrent tensors as the user wrote them -===//
#ifndef RT_OPS_TD
#define RT_OPS_TD

include "common/TensorOpSet.td"
include "mlir/IR/SymbolInterfaces.td"

def Rt_Dialect : Dialect {
  let name = "rt";
  let cppNamespace = "::rt";
  let summary = "Recurrent tensors, as traced from a Tidal Python program";
  let description = [{
    `rt` records what the user wrote: a program over temporal dimensions
    (`t < T`, `i < I`), tensors with temporal domains, temporal indexing with
    symbolic expressions (`x[t - 1]`, `k[0:t + 1]`), and recurrent tensors
    defined by cases (`s[0] = a`, `s[t + 1] = f(s[t])`). Every op carries the
    domain over which it varies. The `rt-to-sdg` pass turns it into a
    symbolic dependence graph.
  }];
  let dependentDialects = ["::tidal::TidalDialect"];
}

class Rt_Op<string mnemonic, list<Trait> traits = []> : Op<Rt_Dialect, mnemonic, traits>;

def Rt_ProgramOp : Rt_Op<"program", [Symbol, NoTerminator, SingleBlock, IsolatedFromAbove]> {
  let summary = "a recurrent-tensor program over temporal dimensions";
  let description = [{
    Declares the temporal dimensions as pairs of a step and its bound, and
    holds the program's operations in SSA order.

    Example:

    ```mlir
    rt.program @p dims [t < T] {
      %x = rt.input "x" domain [t] : !tidal.tensor<[4], f32>
      rt.output "x" %x : !tidal.tensor<[4], f32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrArrayAttr:$steps, StrArrayAttr:$bounds);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name `dims` custom<Dims>($steps, $bounds) attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Rt_InputOp : Rt_Op<"input"> {
  let summary = "a tensor fed at run time";
  let description = [{
    A named input; at run time it is given as an array whose leading axes are
    the extents of its domain.

    Example: `%x = rt.input "x" domain [t] : !tidal.tensor<[4], f32>`
  }];
  let arguments = (ins StrAttr:$name, Tidal_IndexAttr:$domain);
  let results = (outs Tidal_AnyTensor:$result);
  let assemblyFormat = "$name `domain` custom<Domain>($domain) attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
  let extraClassDefinition = "::llvm::LogicalResult $cppClass::verify() { return ::tidal::verifySource(getOperation(), false); }";
}

def Rt_ParamOp : Rt_Op<"param"> {
  let summary = "a named parameter of the program (e.g. weights), bound at run time";
  let description = [{
    A parameter has a name, a static shape and an element type; its values
    are a run-time buffer bound to the compiled program by name (weights are
    not part of the IR, so compiling does not depend on their size or values
    and new weights need no recompilation). An optional `value` holds the
    values inside the IR instead (hand-written fixtures); a run given a
    buffer under the same name uses the buffer.

    Example: `%w = rt.param "W" domain [] : !tidal.tensor<[3, 3], f32>`
    Example: `%w = rt.param "W" dense<1.0> : tensor<3x3xf32> domain [] : !tidal.tensor<[3, 3], f32>`
  }];
  let arguments = (ins StrAttr:$name, OptionalAttr<ElementsAttr>:$value, Tidal_IndexAttr:$domain);
  let results = (outs Tidal_AnyTensor:$result);
  let assemblyFormat = "$name ($value^)? `domain` custom<Domain>($domain) attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
  let extraClassDefinition = "::llvm::LogicalResult $cppClass::verify() { return ::tidal::verifyParam(getOperation(), false); }";
}

def Rt_RecurrentOp : Rt_Op<"recurrent"> {
  let summary = "declares a recurrent tensor defined by cases";
  let description = [{
    The value is given by the `rt.define` ops that name it, tried in order:
    the first whose index (and condition) matches a point defines it there.

    Example:

    ```mlir
    %s = rt.recurrent domain [t] : !tidal.tensor<[4], f32>
    rt.define %s[0] = %x0 : !tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>
    rt.define %s[t + 1] = %next : !tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>
    ```
  }];
  let arguments = (ins Tidal_IndexAttr:$domain);
  let results = (outs Tidal_AnyTensor:$result);
  let assemblyFormat = "`domain` custom<Domain>($domain) attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
  let extraClassDefinition = "::llvm::LogicalResult $cppClass::verify() { return ::tidal::verifySource(getOperation(), false); }";
}

def Rt_DefineOp : Rt_Op<"define"> {
  let summary = "one case of a recurrent tensor's definition";
  let description = [{
    `rt.define %s[idx] if cond = %v` says that `s` at the points matching
    `idx` (one component per dimension of `s`'s domain; a point such as `0` or
    `t + 1`) and `cond` equals `v`. `v` is evaluated at the point where the
    index expressions are evaluated (for `s[t + 1] = f(s[t])`, `v` at `t`).

    Example: `rt.define %s[t + 1] = %v : !tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>`
  }];
  let arguments = (ins Tidal_AnyTensor:$target, Tidal_IndexAttr:$index,
                       OptionalAttr<Tidal_ExprAttr>:$cond, Tidal_AnyTensor:$value);
  let assemblyFormat = "custom<IndexedOperand>($target, $index) (`if` $cond^)? `=` $value attr-dict `:` qualified(type($target)) `,` qualified(type($value))";
  let hasVerifier = 1;
}

def Rt_IndexOp : Rt_Op<"index", [Pure]> {
  let summary = "temporal indexing of a recurrent tensor";
  let description = [{
    Reads `source` at the symbolic index (one component per dimension of the
    source's domain, points or slices). A slice adds a leading spatial
    dimension; a constant component removes that dimension from the domain.

    Example: `%w = rt.index %x[max(0, t - 2):t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[min(t, 2) + 1, 4], f32>`
  }];
  let arguments = (ins Tidal_AnyTensor:$source, Tidal_IndexAttr:$index, Tidal_IndexAttr:$domain);
  let results = (outs Tidal_AnyTensor:$result);
  let assemblyFormat = "custom<IndexedOperand>($source, $index) `domain` custom<Domain>($domain) attr-dict `:` functional-type($source, $result)";
  let hasVerifier = 1;
}

def Rt_OutputOp : Rt_Op<"output"> {
  let summary = "a named result of the program";
  let description = [{
    Returns `value` at every point of its domain (where `cond` holds, if given).

    Example: `rt.output "s" %s : !tidal.tensor<[4], f32>`
  }];
  let arguments = (ins StrAttr:$name, Tidal_AnyTensor:$value, OptionalAttr<Tidal_ExprAttr>:$cond);
  let assemblyFormat = "$name $value (`if` $cond^)? attr-dict `:` qualified(type($value))";
  let hasVerifier = 1;
  let extraClassDefinition = "::llvm::LogicalResult $cppClass::verify() { return ::tidal::verifyOutput(getOperation()); }";
}

def Rt_StopWhenOp : Rt_Op<"stop_when"> {
  let summary = "ends the run after the first point where a condition holds";
  let description = [{
    `cond` is a boolean scalar (`i1`, shape `[]`) over one temporal dim `t`
    (the last dim of its domain). A run ends after the first point `t_stop`
    where `cond` holds: the bound `T` given to the run is a maximum, and the
    program means what it means with `T = t_stop + 1` (no point holds:
    `T` as given). The value of `cond` at `t` must not depend on `T` nor on
    points after `t`.

    Example: `rt.stop_when %done : !tidal.tensor<[], i1>`
  }];
  let arguments = (ins Tidal_AnyTensor:$cond);
  let assemblyFormat = "$cond attr-dict `:` qualified(type($cond))";
  let hasVerifier = 1;
  let extraClassDefinition = "::llvm::LogicalResult $cppClass::verify() { return ::tidal::verifyStopWhen(getOperation()); }";
}

defm Rt : TidalTensorOps<Rt_Dialect, 0>;

#endif // RT_OPS_TD
