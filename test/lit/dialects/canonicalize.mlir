// Upstream canonicalize and cse run on both dialects (constants used to abort
// canonicalize: they claimed ConstantLike without a folder).
// RUN: tidal-opt %s --pass-pipeline='builtin.module(canonicalize,cse)' | FileCheck %s

// CHECK-LABEL: rt.program @p
// CHECK: rt.constant dense<5.000000e-01>
// CHECK-NOT: rt.constant
rt.program @p dims [t < T] {
  %x = rt.input "x" domain [t] : !tidal.tensor<[4], f32>
  %a = rt.constant dense<5.000000e-01> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %b = rt.constant dense<5.000000e-01> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %y = rt.binary mul %x, %a domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[4], f32>
  %z = rt.binary mul %y, %b domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[4], f32>
  rt.output "z" %z : !tidal.tensor<[4], f32>
}

// CHECK-LABEL: sdg.graph @recurrence
// CHECK: sdg.constant dense<5.000000e-01>
// CHECK: sdg.merge
sdg.graph @recurrence dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %half = sdg.constant dense<5.000000e-01> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %s = sdg.merge %x[0] if <t eq 0>, %n[t] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %d = sdg.binary mul %s[t - 1], %half[] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[4], f32>
  %n = sdg.binary add %d[t], %x[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "s" %s[t] domain [t] : !tidal.tensor<[4], f32>
}
