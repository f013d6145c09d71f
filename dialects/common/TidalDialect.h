//===- TidalDialect.h - the tidal base dialect ----------------*- C++ -*-===//
#ifndef TIDAL_DIALECT_H
#define TIDAL_DIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "common/SymbolicSyntax.h"

#include "TidalDialect.h.inc"
#include "TidalEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "TidalAttrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "TidalTypes.h.inc"

#endif // TIDAL_DIALECT_H
