// rt.stop_when / sdg.stop_when: a boolean scalar condition; the sdg op reads it
// at a dependence over a non-empty domain. Valid ops round-trip; bad ones are
// refused by their verifiers.
// RUN: tidal-opt %s --split-input-file | FileCheck %s
// RUN: tidal-opt %s --split-input-file --verify-diagnostics --mlir-print-op-generic -o /dev/null

// CHECK-LABEL: rt.program @rt_stop
// CHECK: rt.stop_when %{{.*}} : !tidal.tensor<[], i1>
rt.program @rt_stop dims [t < T] {
  %x = rt.input "x" domain [t] : !tidal.tensor<[], f32>
  %z = rt.constant dense<0.0> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %c = rt.binary gt %x, %z domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], i1>
  rt.stop_when %c : !tidal.tensor<[], i1>
  rt.output "x" %x : !tidal.tensor<[], f32>
}

// -----

// CHECK-LABEL: sdg.graph @sdg_stop
// CHECK: sdg.stop_when %{{.*}}[t] domain [t] : !tidal.tensor<[], i1>
sdg.graph @sdg_stop dims [t < T] {
  %c = sdg.input "c" domain [t] : !tidal.tensor<[], i1>
  sdg.stop_when %c[t] domain [t] : !tidal.tensor<[], i1>
}
