/*===- TidalCAPI.h - C API of the tidal, rt and sdg dialects ------*- C -*-===*/
#ifndef TIDAL_CAPI_H
#define TIDAL_CAPI_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Tidal, tidal);
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Rt, rt);
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Sdg, sdg);

#ifdef __cplusplus
}
#endif

#endif /* TIDAL_CAPI_H */
