//===- TensorOpVerifiers.h - verifiers shared by rt and sdg ---*- C++ -*-===//
//
// Each function checks one kind of operator, generically over rt and sdg (the
// ops are declared once in TensorOpSet.td). `withDeps` is true for sdg ops,
// whose operands carry dependence expressions.
//===----------------------------------------------------------------------===//
#ifndef TIDAL_TENSOR_OP_VERIFIERS_H
#define TIDAL_TENSOR_OP_VERIFIERS_H

#include "mlir/IR/Operation.h"

namespace tidal {
using VerifyFn = llvm::LogicalResult(mlir::Operation *, bool withDeps);
VerifyFn verifyUnary, verifyBinary, verifyWhere, verifyReduce, verifyArgsort, verifyMatmul,
    verifyReshape, verifyPermute, verifyExpand, verifySqueeze, verifyUnsqueeze,
    verifyShapePreservingDimOp, verifyLinearScan, verifySlice, verifyTake, verifyIndexSelect, verifyGather,
    verifyScatterAdd, verifyConcat, verifyPad, verifyCast, verifyUdf, verifyConstant,
    verifyParam, verifySource, verifyIota, verifySymbolValue;

/// Checks an output op (rt.output / sdg.output).
llvm::LogicalResult verifyOutput(mlir::Operation *op);
/// Checks a stop op (rt.stop_when / sdg.stop_when): a boolean scalar condition.
llvm::LogicalResult verifyStopWhen(mlir::Operation *op);
/// Checks the dims of an rt.program / sdg.graph.
llvm::LogicalResult verifyDims(mlir::Operation *op);
/// Checks everything an op of the tensor set shares: it is nested in a
/// program/graph, its domain names declared steps once each, its result
/// shapes use symbols in scope and (sdg) it has one dependence per operand.
llvm::LogicalResult verifyCommon(mlir::Operation *op, bool withDeps);
/// Checks that `text` only uses the steps of the op's domain and the bounds.
llvm::LogicalResult verifySymbolsInScope(mlir::Operation *op, llvm::StringRef text,
                                         llvm::StringRef what);
} // namespace tidal

#endif // TIDAL_TENSOR_OP_VERIFIERS_H
