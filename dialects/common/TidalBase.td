//===- TidalBase.td - symbolic types and attributes shared by rt and sdg -===//
//
// The `tidal` dialect holds no operations: like `builtin`, it provides the
// vocabulary that the `rt` and `sdg` dialects share: tensors with symbolic
// shapes, symbolic index sequences (dependence expressions, domains) and
// symbolic scalar expressions (conditions, sizes).
//
// Symbolic expressions are written in the MLIR-safe keyword form of
// `tidal.symbolic`: `t - 1`, `max(0, t - 3):t + 1`, `t mod 5 eq 0 and t gt 0`.
// They are parsed with MLIR's own lexer and printed in one canonical spacing,
// so Python and C++ print the same text.
//===----------------------------------------------------------------------===//
#ifndef TIDAL_BASE_TD
#define TIDAL_BASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"

def Tidal_Dialect : Dialect {
  let name = "tidal";
  let cppNamespace = "::tidal";
  let summary = "Symbolic shapes, index sequences and expressions shared by rt and sdg";
  let description = [{
    Types and attributes of Tidal's recurrent-tensor programs:
    `!tidal.tensor<[T - t, 4], f32>` is a tensor whose shape may depend on
    temporal symbols; `#tidal.index<[t - 1, 0:t + 1]>` is a sequence of
    symbolic indices (points or slices), used for dependence expressions and
    temporal domains; `#tidal.expr<t gt 0>` is one symbolic expression, used
    for conditions and symbolic sizes.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
}

def Tidal_IndexAttr : AttrDef<Tidal_Dialect, "Index"> {
  let mnemonic = "index";
  let summary = "A sequence of symbolic index components (points or slices)";
  let description = [{
    Each component is a symbolic integer expression (a point, e.g. `t - 1`)
    or a slice `start:stop` / `start:stop:step` of them (e.g.
    `max(0, t - 3):t + 1`). Used for dependence expressions (one component per
    temporal dimension of the producer), temporal domains (one dimension name
    per component) and symbolic shapes.

    Example: `#tidal.index<[b, 0:t + 1]>`
  }];
  let parameters = (ins ArrayRefParameter<"::mlir::StringAttr", "components">:$components);
  let assemblyFormat = "`<` custom<SymIndexList>($components) `>`";
  let extraClassDeclaration = [{
    /// Number of components.
    size_t size() const { return getComponents().size(); }
  }];
}

def Tidal_ExprAttr : AttrDef<Tidal_Dialect, "Expr"> {
  let mnemonic = "expr";
  let summary = "One symbolic expression (integer or boolean)";
  let description = [{
    A symbolic integer or boolean expression over temporal symbols, such as
    the condition of a merge branch.

    Example: `#tidal.expr<t mod 5 eq 0 and t gt 0>`
  }];
  let parameters = (ins "::mlir::StringAttr":$text);
  let assemblyFormat = "`<` custom<SymExpr>($text) `>`";
}

def Tidal_TensorType : TypeDef<Tidal_Dialect, "Tensor"> {
  let mnemonic = "tensor";
  let summary = "A tensor whose shape may be symbolic";
  let description = [{
    The spatial shape is a list of symbolic expressions over temporal steps
    and bounds; the element type is any builtin scalar type.

    Example: `!tidal.tensor<[T - t, 4], f32>` (the shape of `x[t:T]` when `x`
    has shape `(4,)`); `!tidal.tensor<[], f32>` is a scalar.
  }];
  let parameters = (ins ArrayRefParameter<"::mlir::StringAttr", "shape">:$shape,
                        "::mlir::Type":$elementType);
  let assemblyFormat = "`<` custom<SymIndexList>($shape) `,` $elementType `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Rank of the tensor.
    size_t getRank() const { return getShape().size(); }
    /// The static size of dimension `i`, or std::nullopt if it is symbolic.
    std::optional<int64_t> getStaticDim(size_t i) const;
  }];
}

def Tidal_AnyTensor : Type<CPred<"::llvm::isa<::tidal::TensorType>($_self)">,
                           "tensor with a symbolic shape", "::tidal::TensorType">;

#endif // TIDAL_BASE_TD
