//===- SymbolicSyntax.h - symbolic expressions in MLIR assembly -*- C++ -*-===//
//
// Parses the MLIR-safe keyword form of Tidal's symbolic expressions with
// MLIR's own lexer and prints it back in one canonical spacing (the same text
// `tidal.symbolic.to_text(e, mlir=True)` produces). Also provides the custom
// assembly directives shared by the rt and sdg dialects.
//===----------------------------------------------------------------------===//
#ifndef TIDAL_SYMBOLIC_SYNTAX_H
#define TIDAL_SYMBOLIC_SYNTAX_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/SmallVector.h"
#include <string>

namespace tidal {
class IndexAttr;

/// How deeply parentheses, min/max/select calls and prefix operators (`-`,
/// `not`) may nest in one expression; deeper input is rejected with a
/// diagnostic instead of exhausting the stack. Flat runs of binary operators
/// (`t + t + ... + t`) are not nesting and have no limit. The Python parser
/// (`tidal.symbolic.parse`) enforces the same limit.
constexpr unsigned kMaxExprNestingDepth = 256;

/// Parses one expression; on success `out` holds its canonical text.
mlir::ParseResult parseSymExprText(mlir::AsmParser &p, std::string &out);
/// Parses one index component: an expression or a slice `a:b` / `a:b:k`.
mlir::ParseResult parseSymComponentText(mlir::AsmParser &p, std::string &out);
/// Parses `[c0, c1, ...]` (possibly empty) into canonical component texts.
mlir::ParseResult parseSymComponentList(mlir::AsmParser &p,
                                        llvm::SmallVectorImpl<std::string> &out);

/// The identifiers (symbols) used by a canonical expression text, keywords
/// such as `min` or `and` excluded.
llvm::SmallVector<llvm::StringRef> symbolsOf(llvm::StringRef text);
/// True for a plain identifier such as `t`.
bool isIdentifier(llvm::StringRef text);
/// The integer value of a canonical constant such as `4` or `-1`.
std::optional<int64_t> asInteger(llvm::StringRef text);

// Directives for attribute and type parameters.
mlir::ParseResult parseSymIndexList(mlir::AsmParser &p,
                                    llvm::SmallVector<mlir::StringAttr> &components);
void printSymIndexList(mlir::AsmPrinter &p, llvm::ArrayRef<mlir::StringAttr> components);
mlir::ParseResult parseSymExpr(mlir::AsmParser &p, mlir::StringAttr &text);
void printSymExpr(mlir::AsmPrinter &p, mlir::StringAttr text);

// Directives for operations (see the dialects' .td files).
mlir::ParseResult parseDomain(mlir::OpAsmParser &p, IndexAttr &domain);
void printDomain(mlir::OpAsmPrinter &p, mlir::Operation *op, IndexAttr domain);
mlir::ParseResult parseIndexBrackets(mlir::OpAsmParser &p, IndexAttr &index);
void printIndexBrackets(mlir::OpAsmPrinter &p, mlir::Operation *op, IndexAttr index);
mlir::ParseResult parseIndexedOperand(mlir::OpAsmParser &p,
                                      mlir::OpAsmParser::UnresolvedOperand &operand,
                                      IndexAttr &index);
void printIndexedOperand(mlir::OpAsmPrinter &p, mlir::Operation *op, mlir::Value operand,
                         IndexAttr index);
mlir::ParseResult parseDims(mlir::OpAsmParser &p, mlir::ArrayAttr &steps, mlir::ArrayAttr &bounds);
void printDims(mlir::OpAsmPrinter &p, mlir::Operation *op, mlir::ArrayAttr steps,
               mlir::ArrayAttr bounds);
// sdg.graph's dims: a bound may be derived from the others, `n < N = (T + 63) floordiv 64`
// (what sdg-tile makes); `derived` holds one text per dim ("" for a bound the run gives),
// or none at all.
mlir::ParseResult parseDims(mlir::OpAsmParser &p, mlir::ArrayAttr &steps, mlir::ArrayAttr &bounds,
                            mlir::ArrayAttr &derived);
void printDims(mlir::OpAsmPrinter &p, mlir::Operation *op, mlir::ArrayAttr steps,
               mlir::ArrayAttr bounds, mlir::ArrayAttr derived);
mlir::ParseResult parseDepOperands(
    mlir::OpAsmParser &p, llvm::SmallVectorImpl<mlir::OpAsmParser::UnresolvedOperand> &operands,
    mlir::ArrayAttr &deps);
void printDepOperands(mlir::OpAsmPrinter &p, mlir::Operation *op, mlir::OperandRange operands,
                      mlir::ArrayAttr deps);
mlir::ParseResult parseMergeBranches(
    mlir::OpAsmParser &p, llvm::SmallVectorImpl<mlir::OpAsmParser::UnresolvedOperand> &operands,
    mlir::ArrayAttr &deps, mlir::ArrayAttr &conds);
void printMergeBranches(mlir::OpAsmPrinter &p, mlir::Operation *op, mlir::OperandRange operands,
                        mlir::ArrayAttr deps, mlir::ArrayAttr conds);

} // namespace tidal

#endif // TIDAL_SYMBOLIC_SYNTAX_H
