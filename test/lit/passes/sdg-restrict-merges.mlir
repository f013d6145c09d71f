// RUN: tidal-opt %s --split-input-file --sdg-restrict-merges | FileCheck %s

// Weights over (iteration i, epoch k), read by the acting loop at epoch 0:
// at k = 0 the third branch (k >= 1) cannot hold, so the read goes to a merge
// over i of the first two, their conditions and reads at k = 0. Both readers
// at [i, 0] share it; the learner's read at [i, k] keeps the whole merge.
// CHECK-LABEL: sdg.graph @epochs
// CHECK: %[[W0:.*]] = sdg.input "w0"
// CHECK: %[[R:.*]] = sdg.merge %[[W0]][] if <i eq 0>, %[[U:.*]][i - 1, K - 1] if <i ge 1> domain [i] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
// CHECK: %[[W:.*]] = sdg.merge %[[W0]][] if <i eq 0 and k eq 0>
// CHECK: sdg.binary mul %{{.*}}[i, t], %[[R]][i] domain [i, t]
// CHECK: sdg.binary add %{{.*}}[i, t], %[[R]][i] domain [i, t]
// CHECK: %[[U]] = sdg.binary add %[[W]][i, k], %{{.*}}[] domain [i, k]
sdg.graph @epochs dims [i < I, k < K, t < T] {
  %w0 = sdg.input "w0" domain [] : !tidal.tensor<[4], f32>
  %x = sdg.input "x" domain [i, t] : !tidal.tensor<[4], f32>
  %g = sdg.input "g" domain [] : !tidal.tensor<[4], f32>
  %w = sdg.merge %w0[] if <i eq 0 and k eq 0>, %u[i - 1, K - 1] if <k eq 0 and i ge 1>, %u[i, k - 1] if <k ge 1> domain [i, k] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %a = sdg.binary mul %x[i, t], %w[i, 0] domain [i, t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %b = sdg.binary add %a[i, t], %w[i, 0] domain [i, t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %u = sdg.binary add %w[i, k], %g[] domain [i, k] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "b" %b[i, t] domain [i, t] : !tidal.tensor<[4], f32>
  sdg.output "w" %w[i, k] domain [i, k] : !tidal.tensor<[4], f32>
}

// -----

// One branch left, and true: the reader reads its source directly, at the
// composed point (h[i, 0] of h[i, t] = x[i, 0] if t == 0 else f(h[i, t - 1]) is
// x[i, 0]). Reads at a constant point (h[0, 0], from domain []) stay, and so
// does h[i, T - 1]: T - 1 eq 0 holds when T = 1.
// CHECK-LABEL: sdg.graph @single
// CHECK: %[[X:.*]] = sdg.input "x"
// CHECK: %[[H:.*]] = sdg.merge
// CHECK: sdg.unary exp %[[X]][i, 0] domain [i]
// CHECK: sdg.unary exp %[[H]][0, 0] domain []
// CHECK: sdg.unary exp %[[H]][i, T - 1] domain [i]
sdg.graph @single dims [i < I, t < T] {
  %x = sdg.input "x" domain [i, t] : !tidal.tensor<[4], f32>
  %h = sdg.merge %x[i, 0] if <t eq 0>, %f[i, t - 1] if <true> domain [i, t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %f = sdg.unary tanh %h[i, t] domain [i, t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %a = sdg.unary exp %h[i, 0] domain [i] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %b = sdg.unary exp %h[0, 0] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %c = sdg.unary exp %h[i, T - 1] domain [i] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "a" %a[i] domain [i] : !tidal.tensor<[4], f32>
  sdg.output "b" %b[] domain [] : !tidal.tensor<[4], f32>
  sdg.output "c" %c[i] domain [i] : !tidal.tensor<[4], f32>
}

// -----

// Refused: a read at the merge's own point, at t - 1 (no condition becomes
// false: t - 1 eq 0 may hold), and through a slice.
// CHECK-LABEL: sdg.graph @refused
// CHECK: %[[H:.*]] = sdg.merge
// CHECK-NOT: sdg.merge
// CHECK: sdg.unary tanh %[[H]][t]
// CHECK: sdg.binary add %[[H]][t - 1]
// CHECK: sdg.reduce sum [0] %[[H]][0:T]
sdg.graph @refused dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %h = sdg.merge %x[0] if <t eq 0>, %f[t - 1] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %f = sdg.unary tanh %h[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %y = sdg.binary add %h[t - 1], %x[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %s = sdg.reduce sum [0] %h[0:T] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "y" %y[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "s" %s[] domain [] : !tidal.tensor<[4], f32>
}

// -----

// A branch that reads at a floordiv of the step, the merge read at a point
// where the other branches drop: the restricted merge's dependence is written
// in the IR's syntax (`floordiv`; `//` does not parse: fuzz seed 3737).
// CHECK-LABEL: sdg.graph @floordiv
// CHECK: sdg.merge %{{.*}}[t floordiv 2 + 1] if <(t + 1) mod 2 eq 0>, %{{.*}}[t + 1] if <true> domain [t]
sdg.graph @floordiv dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[3], f32>
  %y = sdg.input "y" domain [t] : !tidal.tensor<[3], f32>
  %m = sdg.merge %x[0] if <t eq 0>, %x[(t + 1) floordiv 2] if <t mod 2 eq 0>, %y[t] if <true> domain [t] : (!tidal.tensor<[3], f32>, !tidal.tensor<[3], f32>, !tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  %r = sdg.unary neg %m[t + 1] domain [t] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  sdg.output "r" %r[t] domain [t] : !tidal.tensor<[3], f32>
}
