// RUN: tidal-opt %s --split-input-file --sdg-lift-recurrence | FileCheck %s

// GAE: adv[t] = delta[t] + c[t] * adv[t + 1], adv[T - 1] = delta[T - 1]. The base
// is delta at the boundary, so the scan reads delta[i, 0:T] in one read; c is read
// where the recurrence used it (0:T - 1) and padded with a zero row.
// CHECK-LABEL: sdg.graph @gae
// CHECK: %[[D:.*]] = sdg.input "delta"
// CHECK: %[[C:.*]] = sdg.input "c"
// CHECK: %[[A:.*]] = sdg.pad 0 <0> <1> value 0.000000e+00 %[[C]][i, 0:T - 1] domain [i] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[T, 4], f32>
// CHECK: %[[S:.*]] = sdg.linear_scan 0 reverse %[[A]][i], %[[D]][i, 0:T] domain [i] : (!tidal.tensor<[T, 4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[T, 4], f32>
// CHECK: %[[Y:.*]] = sdg.take 0 at <t> %[[S]][i] domain [i, t] : (!tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[4], f32>
// CHECK-NOT: sdg.merge
// CHECK: sdg.output "adv" %[[Y]][i, t]
sdg.graph @gae dims [i < I, t < T] {
  %delta = sdg.input "delta" domain [i, t] : !tidal.tensor<[4], f32>
  %c = sdg.input "c" domain [i, t] : !tidal.tensor<[4], f32>
  %adv = sdg.merge %delta[i, T - 1] if <t eq T - 1>, %n[i, t] if <true> domain [i, t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %r = sdg.binary mul %c[i, t], %adv[i, t + 1] domain [i, t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %n = sdg.binary add %delta[i, t], %r[i, t] domain [i, t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "adv" %adv[i, t] domain [i, t] : !tidal.tensor<[4], f32>
}

// -----

// A running sum as the frontend writes `s[0] = s0; s[t + 1] = s[t] + f[t]`: the
// merge reads its add one step back (`%n[t - 1] if <t ge 1>`). The scan's b is the
// base, then f[0:T - 1]; a is ones (no factor).
// CHECK-LABEL: sdg.graph @running_sum
// CHECK: %[[F:.*]] = sdg.input "f"
// CHECK: %[[B0:.*]] = sdg.input "s0"
// CHECK: %[[R:.*]] = sdg.reshape %[[B0]][] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[1, 4], f32>
// CHECK: %[[B:.*]] = sdg.concat 0 %[[R]][], %[[F]][0:T - 1] domain [] : (!tidal.tensor<[1, 4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[T, 4], f32>
// CHECK: %[[ONE:.*]] = sdg.full 1.000000e+00 domain [] : !tidal.tensor<[T, 4], f32>
// CHECK: %[[S:.*]] = sdg.linear_scan 0 %[[ONE]][], %[[B]][] domain []
// CHECK: %[[Y:.*]] = sdg.take 0 at <t> %[[S]][] domain [t]
// CHECK: sdg.output "s" %[[Y]][t]
sdg.graph @running_sum dims [t < T] {
  %f = sdg.input "f" domain [t] : !tidal.tensor<[4], f32>
  %s0 = sdg.input "s0" domain [] : !tidal.tensor<[4], f32>
  %s = sdg.merge %s0[] if <t eq 0>, %n[t - 1] if <t ge 1> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %n = sdg.binary add %s[t], %f[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "s" %s[t] domain [t] : !tidal.tensor<[4], f32>
}

// -----

// Discounted returns with a scalar discount (a value without the step): the
// factor is expanded to the rows the recurrence uses, then padded.
// CHECK-LABEL: sdg.graph @discounted
// CHECK: %[[G:.*]] = sdg.constant
// CHECK: %[[E:.*]] = sdg.expand %[[G]][] domain [] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[T - 1, 2], f32>
// CHECK: %[[A:.*]] = sdg.pad 0 <0> <1> value 0.000000e+00 %[[E]][] domain []
// CHECK: sdg.linear_scan 0 reverse %[[A]][], %{{.*}}[0:T] domain []
sdg.graph @discounted dims [t < T] {
  %r = sdg.input "r" domain [t] : !tidal.tensor<[2], f32>
  %g = sdg.constant dense<0.9> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %y = sdg.merge %r[T - 1] if <t eq T - 1>, %n[t] if <true> domain [t] : (!tidal.tensor<[2], f32>, !tidal.tensor<[2], f32>) -> !tidal.tensor<[2], f32>
  %m = sdg.binary mul %g[], %y[t + 1] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[2], f32>) -> !tidal.tensor<[2], f32>
  %n = sdg.binary add %r[t], %m[t] domain [t] : (!tidal.tensor<[2], f32>, !tidal.tensor<[2], f32>) -> !tidal.tensor<[2], f32>
  sdg.output "y" %y[t] domain [t] : !tidal.tensor<[2], f32>
}

// -----

// Refused: a product of the recurrence with itself (not linear), a recurrence
// whose b depends on it through another op (an environment's state: tanh of
// the previous value), a merge with three cases, and an integer recurrence.
// CHECK-LABEL: sdg.graph @refused
// CHECK-COUNT-4: sdg.merge
// CHECK-NOT: sdg.linear_scan
sdg.graph @refused dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %k = sdg.input "k" domain [t] : !tidal.tensor<[4], i32>
  %sq = sdg.merge %x[0] if <t eq 0>, %sqn[t] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %sqm = sdg.binary mul %sq[t - 1], %sq[t - 1] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %sqn = sdg.binary add %x[t], %sqm[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %env = sdg.merge %x[0] if <t eq 0>, %envn[t] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %th = sdg.unary tanh %env[t - 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %envn = sdg.binary add %th[t], %env[t - 1] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %three = sdg.merge %x[0] if <t eq 0>, %x[1] if <t eq 1>, %tn[t] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %tn = sdg.binary add %x[t], %three[t - 1] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %int = sdg.merge %k[0] if <t eq 0>, %in[t] if <true> domain [t] : (!tidal.tensor<[4], i32>, !tidal.tensor<[4], i32>) -> !tidal.tensor<[4], i32>
  %in = sdg.binary add %k[t], %int[t - 1] domain [t] : (!tidal.tensor<[4], i32>, !tidal.tensor<[4], i32>) -> !tidal.tensor<[4], i32>
  sdg.output "sq" %sq[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "env" %env[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "three" %three[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "int" %int[t] domain [t] : !tidal.tensor<[4], i32>
}
