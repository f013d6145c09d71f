//===- SdgDialect.h - the sdg dialect --------------------------*- C++ -*-===//
#ifndef SDG_DIALECT_H
#define SDG_DIALECT_H

#include "common/TidalDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "SdgDialect.h.inc"
#define GET_OP_CLASSES
#include "SdgOps.h.inc"

#endif // SDG_DIALECT_H
