//===- TidalDialectPlugin.cpp - dialect plugin for upstream mlir-opt ------===//
//
//   mlir-opt --load-dialect-plugin=$(python -m tidal.dialects --plugin-path) x.mlir
//===----------------------------------------------------------------------===//
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "rt/RtDialect.h"
#include "sdg/SdgDialect.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "TidalDialects", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            registry->insert<tidal::TidalDialect, rt::RtDialect, sdg::SdgDialect>();
          }};
}
