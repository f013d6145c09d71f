// Pipelines that mix upstream passes and Tidal passes, with options, in
// every spelling tidal-opt accepts.
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-dce,func.func(canonicalize),cse)' | FileCheck %s --check-prefixes=CHECK,ARITH,UDF
// RUN: tidal-opt %s --sdg-dce --canonicalize --cse | FileCheck %s --check-prefixes=CHECK,ARITH,UDF
// RUN: tidal-opt %s -sdg-dce -canonicalize -cse | FileCheck %s --check-prefixes=CHECK,ARITH,UDF
// RUN: tidal-opt %s --pass-pipeline='sdg-dce{keep-udfs=false},canonicalize,cse' | FileCheck %s --check-prefixes=CHECK,ARITH,NOUDF
// RUN: tidal-opt %s --sdg-dce='keep-udfs=0' --canonicalize='max-iterations=3' --cse | FileCheck %s --check-prefixes=CHECK,ARITH,NOUDF
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-dce{keep-udfs})' | FileCheck %s --check-prefixes=CHECK,UDF
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-dce,cse)' -o %t && FileCheck %s --check-prefixes=CHECK,UDF < %t
// RUN: tidal-opt - --sdg-dce < %s | FileCheck %s --check-prefixes=CHECK,UDF
// RUN: tidal-opt %s | FileCheck %s --check-prefix=NOPASS
// RUN: tidal-opt %s --mlir-print-op-generic | tidal-opt --sdg-dce | FileCheck %s --check-prefixes=CHECK,UDF


// Upstream passes folded and deduplicated the arithmetic.
// CHECK-LABEL: func.func @arith(
// ARITH-NEXT:    %[[M:.*]] = arith.muli %arg0, %arg0 : i32
// ARITH-NEXT:    %[[A:.*]] = arith.addi %[[M]], %[[M]] : i32
// ARITH-NEXT:    return %[[A]] : i32
func.func @arith(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %0 = arith.addi %a, %c0 : i32
  %1 = arith.muli %0, %0 : i32
  %2 = arith.muli %0, %0 : i32
  %3 = arith.addi %1, %2 : i32
  return %3 : i32
}

// sdg-dce erased the unread input and the dead exp; the UDF goes only with
// keep-udfs=false. Without passes everything is still there.
// CHECK-LABEL:  sdg.graph @g
// CHECK-NEXT:     sdg.input "x"
// CHECK-NOT:      sdg.input "unused"
// CHECK-NOT:      sdg.unary exp
// UDF-NEXT:       sdg.udf "log"
// NOUDF-NOT:      sdg.udf
// CHECK:          sdg.unary tanh
// CHECK-NEXT:     sdg.output "y"
// NOPASS-LABEL: sdg.graph @g
// NOPASS-NEXT:    sdg.input "x"
// NOPASS-NEXT:    sdg.input "unused"
// NOPASS-NEXT:    sdg.unary exp
// NOPASS-NEXT:    sdg.udf "log"
sdg.graph @g dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %u = sdg.input "unused" domain [t] : !tidal.tensor<[4], f32>
  %e = sdg.unary exp %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %l = sdg.udf "log"(%x[t]) domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[], f32>
  %y = sdg.unary tanh %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "y" %y[t] domain [t] : !tidal.tensor<[4], f32>
}
