// IR dumps (to stderr) in mlir-opt's format, for upstream and Tidal passes.
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-dce,func.func(canonicalize),cse)' --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER-ALL
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-dce,cse)' --mlir-print-ir-before-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=BEFORE-ALL
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-dce,func.func(canonicalize),cse)' --mlir-print-ir-after=sdg-dce -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER-DCE
// RUN: tidal-opt %s --sdg-dce --canonicalize --cse --mlir-print-ir-before=cse,sdg-dce -o /dev/null 2>&1 | FileCheck %s --check-prefix=BEFORE-SOME
// RUN: tidal-opt %s --sdg-dce --mlir-print-ir-after-all --mlir-print-op-generic -o /dev/null 2>&1 | FileCheck %s --check-prefix=GENERIC
// RUN: not tidal-opt %s --sdg-dce --mlir-print-ir-after=no-such-pass 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// AFTER-ALL:      // -----// IR Dump After SdgDeadCodeElimination (sdg-dce) //----- //
// AFTER-ALL-NEXT: module {
// AFTER-ALL-NOT:  sdg.unary exp
// AFTER-ALL:      // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// AFTER-ALL-NEXT: func.func @f
// AFTER-ALL:      // -----// IR Dump After CSE (cse) //----- //
// AFTER-ALL-NOT:  IR Dump

// BEFORE-ALL:      // -----// IR Dump Before SdgDeadCodeElimination (sdg-dce) //----- //
// BEFORE-ALL:      sdg.unary exp
// BEFORE-ALL:      // -----// IR Dump Before CSE (cse) //----- //
// BEFORE-ALL-NOT:  sdg.unary exp
// BEFORE-ALL-NOT:  IR Dump After

// AFTER-DCE-NOT:  IR Dump Before
// AFTER-DCE:      // -----// IR Dump After SdgDeadCodeElimination (sdg-dce) //----- //
// AFTER-DCE-NOT:  IR Dump

// BEFORE-SOME:      // -----// IR Dump Before SdgDeadCodeElimination (sdg-dce) //----- //
// BEFORE-SOME-NOT:  IR Dump Before Canonicalizer
// BEFORE-SOME:      // -----// IR Dump Before CSE (cse) //----- //
// BEFORE-SOME-NOT:  IR Dump

// GENERIC: // -----// IR Dump After SdgDeadCodeElimination (sdg-dce) //----- //
// GENERIC: "sdg.graph"()

// UNKNOWN: for the --mlir-print-ir-after option: 'no-such-pass' is not a registered pass

func.func @f(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %0 = arith.addi %a, %c0 : i32
  return %0 : i32
}

sdg.graph @g dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %e = sdg.unary exp %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "x" %x[t] domain [t] : !tidal.tensor<[4], f32>
}
