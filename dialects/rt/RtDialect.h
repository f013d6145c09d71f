//===- RtDialect.h - the rt dialect ----------------------------*- C++ -*-===//
#ifndef RT_DIALECT_H
#define RT_DIALECT_H

#include "common/TidalDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "RtDialect.h.inc"
#define GET_OP_CLASSES
#include "RtOps.h.inc"

#endif // RT_DIALECT_H
