// sdg-schedule with an sdg.stop_when: the stop and what its condition reads
// are scheduled first (one loop over t), everything else after, the ops that
// read T (here the suffix sum r[t:T]) included. A condition that reads T is
// refused at the op that reads it (sdg-schedule-errors.mlir).
// RUN: tidal-opt %s --load-pass-plugin=tidal.lowering.passes --sdg-schedule | FileCheck %s

!f = !tidal.tensor<[], f32>
!b = !tidal.tensor<[], i1>

// After the constant (S1): one loop of the input, the condition and the stop
// (S0, S2, S3), then the suffix sum and its output (S4, S5) in a loop of
// their own, then the output of r (S6).
// CHECK-LABEL: sdg.graph @stop_first
// CHECK-SAME: sequence: [ { filter: \22[T] -> { S1[] }\22 }, { filter: \22[T] -> { S{{[023]}}[t]; S{{[023]}}[t]; S{{[023]}}[t] }\22
// CHECK-SAME: { filter: \22[T] -> { S{{[45]}}[t]; S{{[45]}}[t] }\22
sdg.graph @stop_first dims [t < T] {
  %r = sdg.input "r" domain [t] : !f
  %z = sdg.constant dense<0.0> : tensor<f32> domain [] : !f
  %c = sdg.binary gt %r[t], %z[] domain [t] : (!f, !f) -> !b
  sdg.stop_when %c[t] domain [t] : !b
  %g = sdg.reduce sum [0] %r[t:T] domain [t] : (!f) -> !f
  sdg.output "g" %g[t] domain [t] : !f
  sdg.output "r" %r[t] domain [t] : !f
}
