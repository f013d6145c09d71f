//===- SdgOps.td - the sdg dialect: symbolic dependence graphs ------------===//
#ifndef SDG_OPS_TD
#define SDG_OPS_TD

include "common/TensorOpSet.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"

def Sdg_Dialect : Dialect {
  let name = "sdg";
  let cppNamespace = "::sdg";
  let summary = "Symbolic dependence graphs (TEMPO's SDG)";
  let description = [{
    An `sdg.graph` is a graph region of operators. Each operator is tagged with
    a temporal domain (`domain [b, t]`: it executes at every point of it) and
    each operand with a dependence expression saying which points of its
    producer it reads (`%x[t - 1]`, `%k[max(0, t - 3):t + 1]`, `%r[t:min(t + 3, T)]`,
    `%w[]` for a producer with an empty domain). Definitions by cases are
    `sdg.merge` ops with one condition per branch; recurrences are cycles
    through merges, which a graph region allows.
  }];
  let dependentDialects = ["::tidal::TidalDialect"];
}

class Sdg_Op<string mnemonic, list<Trait> traits = []> : Op<Sdg_Dialect, mnemonic, traits>;

def Sdg_GraphOp : Sdg_Op<"graph", [Symbol, NoTerminator, SingleBlock, IsolatedFromAbove,
    DeclareOpInterfaceMethods<RegionKindInterface>]> {
  let summary = "a symbolic dependence graph over temporal dimensions";
  let description = [{
    Declares the temporal dimensions (step `<` bound) and holds the operators
    in a graph region: uses may precede definitions and cycles are allowed.

    A bound is given by each run, or derived from the others: `sdg-tile`
    splits an axis of size T into `n < N = (T + 63) floordiv 64` tiles. A
    derived bound's expression uses only bounds that runs give (`derived`
    holds one text per dim, empty for those, or no text at all).

    Example:

    ```mlir
    sdg.graph @g dims [t < T] {
      %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
      %s = sdg.merge %x[0] if <t eq 0>, %n[t - 1] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
      %n = sdg.binary add %s[t], %x[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
      sdg.output "s" %s[t] domain [t] : !tidal.tensor<[4], f32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrArrayAttr:$steps, StrArrayAttr:$bounds,
                       DefaultValuedAttr<StrArrayAttr, "{}">:$derived);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name `dims` custom<Dims>($steps, $bounds, $derived) attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Sdg_InputOp : Sdg_Op<"input"> {
  let summary = "a tensor fed at run time";
  let description = [{
    Example: `%x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>`
  }];
  let arguments = (ins StrAttr:$name, Tidal_IndexAttr:$domain);
  let results = (outs Tidal_AnyTensor:$result);
  let assemblyFormat = "$name `domain` custom<Domain>($domain) attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
  let extraClassDefinition = "::llvm::LogicalResult $cppClass::verify() { return ::tidal::verifySource(getOperation(), false); }";
}

def Sdg_ParamOp : Sdg_Op<"param"> {
  let summary = "a named parameter of the program (e.g. weights), bound at run time";
  let description = [{
    A parameter has a name, a static shape and an element type; its values
    are a run-time buffer bound to the compiled program by name (weights are
    not part of the IR, so compiling does not depend on their size or values
    and new weights need no recompilation). An optional `value` holds the
    values inside the IR instead (hand-written fixtures); a run given a
    buffer under the same name uses the buffer.

    Example: `%w = sdg.param "W" domain [] : !tidal.tensor<[3, 3], f32>`
    Example: `%w = sdg.param "W" dense<1.0> : tensor<3x3xf32> domain [] : !tidal.tensor<[3, 3], f32>`
  }];
  let arguments = (ins StrAttr:$name, OptionalAttr<ElementsAttr>:$value, Tidal_IndexAttr:$domain);
  let results = (outs Tidal_AnyTensor:$result);
  let assemblyFormat = "$name ($value^)? `domain` custom<Domain>($domain) attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
  let extraClassDefinition = "::llvm::LogicalResult $cppClass::verify() { return ::tidal::verifyParam(getOperation(), false); }";
}

def Sdg_MergeOp : Sdg_Op<"merge"> {
  let summary = "conditional definition by cases (TEMPO's MergeOp)";
  let description = [{
    At each point of its domain, moves the first branch whose condition holds
    to the result. Each branch is an operand with its dependence expression
    and a condition over the domain's steps and the bounds. Cycles through
    merges encode recurrences and state.

    Example:

    ```mlir
    %s = sdg.merge %a[0] if <t eq 0>, %n[t - 1] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
    ```
  }];
  let arguments = (ins Variadic<Tidal_AnyTensor>:$inputs,
                       TypedArrayAttrBase<Tidal_IndexAttr, "dependences">:$deps,
                       TypedArrayAttrBase<Tidal_ExprAttr, "conditions">:$conds,
                       Tidal_IndexAttr:$domain);
  let results = (outs Tidal_AnyTensor:$result);
  let assemblyFormat = "custom<MergeBranches>($inputs, $deps, $conds) `domain` custom<Domain>($domain) attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
}

def Sdg_OutputOp : Sdg_Op<"output"> {
  let summary = "a named result of the graph";
  let description = [{
    Collects the operand at every point of the output's domain.

    Example: `sdg.output "s" %s[t] domain [t] : !tidal.tensor<[4], f32>`
  }];
  let arguments = (ins StrAttr:$name, Tidal_AnyTensor:$value, Tidal_IndexAttr:$dep,
                       Tidal_IndexAttr:$domain);
  let assemblyFormat = "$name custom<IndexedOperand>($value, $dep) `domain` custom<Domain>($domain) attr-dict `:` qualified(type($value))";
  let hasVerifier = 1;
}

def Sdg_StopWhenOp : Sdg_Op<"stop_when"> {
  let summary = "ends the run after the first point where a condition holds";
  let description = [{
    Reads the boolean scalar `cond` at every point of its domain, whose last
    dim `t < T` is the one it stops. A run ends after the first point
    `t_stop` where `cond` holds: `T` (given to the run) is a maximum, memory
    is planned for it, and every value that depends on `T` is computed with
    `T = t_stop + 1` (after the stop; the scheduler orders it so).

    Example: `sdg.stop_when %done[t] domain [t] : !tidal.tensor<[], i1>`
  }];
  let arguments = (ins Tidal_AnyTensor:$cond, Tidal_IndexAttr:$dep, Tidal_IndexAttr:$domain);
  let assemblyFormat = "custom<IndexedOperand>($cond, $dep) `domain` custom<Domain>($domain) attr-dict `:` qualified(type($cond))";
  let hasVerifier = 1;
}

def Sdg_IslandOp : Sdg_Op<"island", [SingleBlock, IsolatedFromAbove]> {
  let summary = "a fused static island: ops that run together at each point";
  let description = [{
    Groups operators of one domain whose dependences on each other are the
    identity (TEMPO's fused dataflow op, paper section 5.4). At each point of
    its domain the island reads its operands with their dependence
    expressions (points, or unit-step slices: the block argument then has one
    leading axis per slice component), binds them to the body's block
    arguments, runs the body's ops in order and yields its results. Every
    body op has the island's domain and reads its operands, which are block
    arguments or earlier body results, at the identity dependence. A backend
    compiles the body into one kernel; `sdg-fuse` creates islands.

    Example:

    ```mlir
    %r = sdg.island %x[t], %h[t - 1] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32> {
    ^bb0(%a: !tidal.tensor<[4], f32>, %b: !tidal.tensor<[4], f32>):
      %s = sdg.binary add %a[t], %b[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
      %y = sdg.unary tanh %s[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
      sdg.yield %y : !tidal.tensor<[4], f32>
    }
    ```
  }];
  let arguments = (ins Variadic<Tidal_AnyTensor>:$inputs,
                       TypedArrayAttrBase<Tidal_IndexAttr, "dependences">:$deps,
                       Tidal_IndexAttr:$domain);
  let results = (outs Variadic<Tidal_AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "custom<DepOperands>($inputs, $deps) `domain` custom<Domain>($domain) attr-dict `:` functional-type($inputs, results) $body";
  let hasVerifier = 1;
}

def Sdg_YieldOp : Sdg_Op<"yield", [Pure, Terminator, HasParent<"IslandOp">]> {
  let summary = "the results of an island's body";
  let description = [{
    Ends an `sdg.island` body; its operands become the island's results, in order.

    Example: `sdg.yield %y, %z : !tidal.tensor<[4], f32>, !tidal.tensor<[], f32>`
  }];
  let arguments = (ins Variadic<Tidal_AnyTensor>:$values);
  let assemblyFormat = "($values^ `:` qualified(type($values)))? attr-dict";
}

defm Sdg : TidalTensorOps<Sdg_Dialect, 1>;

#endif // SDG_OPS_TD
