//===- TidalCAPI.cpp - C API of the tidal, rt and sdg dialects -----------===//
#include "capi/TidalCAPI.h"
#include "rt/RtDialect.h"
#include "sdg/SdgDialect.h"

#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Tidal, tidal, tidal::TidalDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Rt, rt, rt::RtDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Sdg, sdg, sdg::SdgDialect)
