// sdg-vectorize: ops over t whose readers outside need all of t become one op
// with a leading axis of size T; what it must refuse stays as it is.
// RUN: tidal-opt %s --split-input-file --sdg-vectorize | FileCheck %s
// Vectorizing twice changes nothing more:
// RUN: tidal-opt %s --split-input-file --sdg-vectorize --sdg-vectorize | FileCheck %s
// Without early batching, the input projection stays in the loop:
// RUN: tidal-opt %s --split-input-file --pass-pipeline='builtin.module(sdg-vectorize{early=false})' | FileCheck %s --check-prefix=NOEARLY

// A weight gradient: a per-step outer product (matmul), summed over the episode.
// The matmul reads its operands as whole blocks; the sum reads the batched value.
// CHECK-LABEL: sdg.graph @gradient
// CHECK: %[[O:.*]] = sdg.matmul %[[A:.*]][i, 0:T], %[[G:.*]][i, 0:T] domain [i] : (!tidal.tensor<[4, 1], f32>, !tidal.tensor<[1, 2], f32>) -> !tidal.tensor<[T, 4, 2], f32>
// CHECK: sdg.reduce sum [0] %[[O]][i] domain [i] : (!tidal.tensor<[T, 4, 2], f32>) -> !tidal.tensor<[4, 2], f32>
// CHECK-NOT: domain [i, t] : (!tidal.tensor<[4, 1], f32>, !tidal.tensor<[1, 2], f32>)
sdg.graph @gradient dims [i < I, t < T] {
  %h = sdg.input "h" domain [i, t] : !tidal.tensor<[4, 1], f32>
  %g = sdg.input "g" domain [i, t] : !tidal.tensor<[1, 2], f32>
  %o = sdg.matmul %h[i, t], %g[i, t] domain [i, t] : (!tidal.tensor<[4, 1], f32>, !tidal.tensor<[1, 2], f32>) -> !tidal.tensor<[4, 2], f32>
  %s = sdg.reduce sum [0] %o[i, 0:T] domain [i] : (!tidal.tensor<[4, 2], f32>) -> !tidal.tensor<[4, 2], f32>
  sdg.output "s" %s[i] domain [i] : !tidal.tensor<[4, 2], f32>
}

// -----

// A chain: a scalar per step times a vector (its batched form (T) is reshaped to
// (T, 1) to broadcast against (4) as the scalar did), a reduction over the
// vector's axis (axis 0 -> 1), a weight without t (unchanged: it broadcasts).
// CHECK-LABEL: sdg.graph @chain
// CHECK: %[[U:.*]] = sdg.unsqueeze 1 %[[C:.*]][0:T] domain [] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[T, 1], f32>
// CHECK: %[[M:.*]] = sdg.binary mul %[[U]][], %[[W:.*]][] domain [] : (!tidal.tensor<[T, 1], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[T, 4], f32>
// CHECK: %[[E:.*]] = sdg.unary exp %[[M]][] domain [] : (!tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[T, 4], f32>
// CHECK: %[[R:.*]] = sdg.reduce max [1] %[[E]][] domain [] : (!tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[T], f32>
// CHECK: sdg.reduce sum [0] %[[R]][] domain [] : (!tidal.tensor<[T], f32>) -> !tidal.tensor<[], f32>
sdg.graph @chain dims [t < T] {
  %c = sdg.input "c" domain [t] : !tidal.tensor<[], f32>
  %w = sdg.input "w" domain [] : !tidal.tensor<[4], f32>
  %m = sdg.binary mul %c[t], %w[] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %e = sdg.unary exp %m[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %r = sdg.reduce max [0] %e[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[], f32>
  %s = sdg.reduce sum [0] %r[0:T] domain [] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
  sdg.output "s" %s[] domain [] : !tidal.tensor<[], f32>
}

// -----

// Permutes and unsqueezes shift their axes by one.
// CHECK-LABEL: sdg.graph @axes
// CHECK: sdg.permute [0, 2, 1] %{{.*}}[0:T] domain [] : (!tidal.tensor<[4, 2], f32>) -> !tidal.tensor<[T, 2, 4], f32>
// CHECK: sdg.unsqueeze 3 %{{.*}}[] domain [] : (!tidal.tensor<[T, 2, 4], f32>) -> !tidal.tensor<[T, 2, 4, 1], f32>
sdg.graph @axes dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4, 2], f32>
  %p = sdg.permute [1, 0] %x[t] domain [t] : (!tidal.tensor<[4, 2], f32>) -> !tidal.tensor<[2, 4], f32>
  %u = sdg.unsqueeze 2 %p[t] domain [t] : (!tidal.tensor<[2, 4], f32>) -> !tidal.tensor<[2, 4, 1], f32>
  %s = sdg.reduce sum [0] %u[0:T] domain [] : (!tidal.tensor<[2, 4, 1], f32>) -> !tidal.tensor<[2, 4, 1], f32>
  sdg.output "s" %s[] domain [] : !tidal.tensor<[2, 4, 1], f32>
}

// -----

// Refused: a recurrence over t (its points depend on each other), an op read at
// a point by an output, and one read through a window (not the whole range).
// CHECK-LABEL: sdg.graph @refused
// CHECK: sdg.merge %{{.*}}[0] if <t eq 0>, %[[N:.*]][t - 1] if <true> domain [t]
// CHECK: %[[N]] = sdg.unary tanh %{{.*}}[t] domain [t]
// CHECK: sdg.unary exp %{{.*}}[t] domain [t]
// CHECK: sdg.unary sin %{{.*}}[t] domain [t]
// CHECK-NOT: [T, 4]
sdg.graph @refused dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %h = sdg.merge %x[0] if <t eq 0>, %n[t - 1] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %n = sdg.unary tanh %h[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %e = sdg.unary exp %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %w = sdg.unary sin %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %s = sdg.reduce sum [0] %w[0:t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %a = sdg.reduce sum [0] %n[0:T] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "e" %e[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "s" %s[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "a" %a[] domain [] : !tidal.tensor<[4], f32>
}

// -----

// Refused: a matmul whose batched right operand is a vector (a batch of vectors
// on the right would be read as a matrix), and takes at the step itself that are
// not the whole value (another axis; an axis longer than T).
// CHECK-LABEL: sdg.graph @matvec
// CHECK: sdg.matmul %{{.*}}[], %{{.*}}[t] domain [t]
// CHECK: sdg.take 1 at <t> %{{.*}}[] domain [t]
// CHECK: sdg.take 0 at <t> %{{.*}}[] domain [t]
sdg.graph @matvec dims [t < T] {
  %a = sdg.input "a" domain [] : !tidal.tensor<[2, 4], f32>
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %y = sdg.matmul %a[], %x[t] domain [t] : (!tidal.tensor<[2, 4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[2], f32>
  %s = sdg.reduce sum [0] %y[0:T] domain [] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[2], f32>
  %b = sdg.input "b" domain [] : !tidal.tensor<[2, T], f32>
  %k = sdg.take 1 at <t> %b[] domain [t] : (!tidal.tensor<[2, T], f32>) -> !tidal.tensor<[2], f32>
  %q = sdg.reduce sum [0] %k[0:T] domain [] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[2], f32>
  %c = sdg.input "c" domain [] : !tidal.tensor<[T + 1], f32>
  %l = sdg.take 0 at <t> %c[] domain [t] : (!tidal.tensor<[T + 1], f32>) -> !tidal.tensor<[], f32>
  %r = sdg.reduce sum [0] %l[0:T] domain [] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
  sdg.output "s" %s[] domain [] : !tidal.tensor<[2], f32>
  sdg.output "q" %q[] domain [] : !tidal.tensor<[2], f32>
  sdg.output "r" %r[] domain [] : !tidal.tensor<[], f32>
}

// -----

// A take at the step of a value without it whose axis 0 has the step's bound
// (a lifted scan read at t): for all t it is the whole value, read directly
// when the take read it at the identity, else through a slice of all of it.
// CHECK-LABEL: sdg.graph @take_all
// CHECK-NOT: sdg.take
// CHECK: %[[B:.*]] = sdg.input "b" domain [] : !tidal.tensor<[T, 3], f32>
// CHECK: %[[E:.*]] = sdg.unary exp %[[B]][] domain [] : (!tidal.tensor<[T, 3], f32>) -> !tidal.tensor<[T, 3], f32>
// CHECK: sdg.reduce sum [0] %[[E]][] domain []
// CHECK: %[[C:.*]] = sdg.input "c" domain [i] : !tidal.tensor<[T], f32>
// CHECK: %[[S:.*]] = sdg.slice 0 at <0> %[[C]][i - 1] domain [i] : (!tidal.tensor<[T], f32>) -> !tidal.tensor<[T], f32>
// CHECK: sdg.reduce sum [0] %[[S]][i] domain [i]
sdg.graph @take_all dims [i < I, t < T] {
  %b = sdg.input "b" domain [] : !tidal.tensor<[T, 3], f32>
  %k = sdg.take 0 at <t> %b[] domain [t] : (!tidal.tensor<[T, 3], f32>) -> !tidal.tensor<[3], f32>
  %e = sdg.unary exp %k[t] domain [t] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  %q = sdg.reduce sum [0] %e[0:T] domain [] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  %c = sdg.input "c" domain [i] : !tidal.tensor<[T], f32>
  %l = sdg.take 0 at <t> %c[i - 1] domain [i, t] : (!tidal.tensor<[T], f32>) -> !tidal.tensor<[], f32>
  %r = sdg.reduce sum [0] %l[i, 0:T] domain [i] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
  sdg.output "q" %q[] domain [] : !tidal.tensor<[3], f32>
  sdg.output "r" %r[i] domain [i] : !tidal.tensor<[], f32>
}

// -----

// A reduction over a strided slice (fuzz finding F20: the read type of x[i, 0:T:2]
// has (T + 1) floordiv 2 rows, not a unit-step slice's): batched over i, the
// reduced axis moves behind the new leading one.
// CHECK-LABEL: sdg.graph @strided
// CHECK: %[[M:.*]] = sdg.reduce min [1] %{{.*}}[0:I, 0:T:2] domain [] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[I, 2], f32>
// CHECK: sdg.reduce sum [0] %[[M]][] domain []
!v2 = !tidal.tensor<[2], f32>
sdg.graph @strided dims [i < I, t < T] {
  %x = sdg.input "x" domain [i, t] : !v2
  %m = sdg.reduce min [0] %x[i, 0:T:2] domain [i] : (!v2) -> !v2
  %s = sdg.reduce sum [0] %m[0:I] domain [] : (!v2) -> !v2
  sdg.output "s" %s[] domain [] : !v2
}

// -----

// Refused: a pad whose padding varies with the step (a stacked layer dim l pads
// min(l, 2) rows before: no one batched pad does that; found by the stack test once
// sdg-simplify had bypassed the ops around it). The reduction over all of l stays.
// CHECK-LABEL: sdg.graph @step_padding
// CHECK: sdg.pad 0 <min(l, 2)> <max(0, -l + 2)> value 0.000000e+00 %{{.*}}[l] domain [l]
// CHECK: sdg.reduce sum [0] %{{.*}}[0:L] domain []
sdg.graph @step_padding dims [l < L] {
  %x = sdg.input "x" domain [l] : !tidal.tensor<[1, 3], f32>
  %p = sdg.pad 0 <min(l, 2)> <max(0, -l + 2)> value 0.000000e+00 %x[l] domain [l] : (!tidal.tensor<[1, 3], f32>) -> !tidal.tensor<[3, 3], f32>
  %s = sdg.reduce sum [0] %p[0:L] domain [] : (!tidal.tensor<[3, 3], f32>) -> !tidal.tensor<[3, 3], f32>
  sdg.output "s" %s[] domain [] : !tidal.tensor<[3, 3], f32>
}

// -----

// A take at a constant index (a value head's column 0 per step) vectorizes: its
// index does not use t (it was refused while the index attribute was parsed
// from its printed form, `#tidal.expr<0>`, which is no expression).
// CHECK-LABEL: sdg.graph @take_constant
// CHECK: %[[K:.*]] = sdg.take 2 at <0> %{{.*}}[0:T] domain [] : (!tidal.tensor<[4, 1], f32>) -> !tidal.tensor<[T, 4], f32>
// CHECK: sdg.reduce sum [0] %[[K]][] domain []
sdg.graph @take_constant dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4, 1], f32>
  %k = sdg.take 1 at <0> %x[t] domain [t] : (!tidal.tensor<[4, 1], f32>) -> !tidal.tensor<[4], f32>
  %s = sdg.reduce sum [0] %k[0:T] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "s" %s[] domain [] : !tidal.tensor<[4], f32>
}

// -----

// A late reader: GAE's backward recurrence adv[t] = v[t] + c * adv[t + 1] (base
// v[T - 1]) reads v at t and at T - 1. Its loop starts at t = T - 1, after v's
// last point, so v (its operand comes in order) is computed for all t at once
// and each read becomes a take of the batched value: at T - 1 once (domain []),
// at t per point.
// CHECK-LABEL: sdg.graph @late
// CHECK: %[[V:.*]] = sdg.unary tanh %{{.*}}[0:T] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[T, 4], f32>
// CHECK: %[[L:.*]] = sdg.take 0 at <T - 1> %[[V]][] domain [] : (!tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[4], f32>
// CHECK: sdg.merge %[[L]][] if <t eq T - 1>
// CHECK: %[[P:.*]] = sdg.take 0 at <t> %[[V]][] domain [t]
// CHECK: sdg.binary add %[[P]][t], %{{.*}}[t] domain [t]
sdg.graph @late dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %c = sdg.constant dense<0.5> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %v = sdg.unary tanh %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %adv = sdg.merge %v[T - 1] if <t eq T - 1>, %s[t] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %n = sdg.binary mul %adv[t + 1], %c[] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[4], f32>
  %s = sdg.binary add %v[t], %n[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "adv" %adv[t] domain [t] : !tidal.tensor<[4], f32>
}

// -----

// Refused: v read at t by a forward recurrence (h[t] = v[t] + c * h[t - 1]: its
// first point needs v[0]); w read by a backward recurrence but computed from
// another backward recurrence (b: its last point comes first, so a batched w
// would wait for b's whole loop).
// CHECK-LABEL: sdg.graph @late_refused
// CHECK-NOT: 0:T
// CHECK-NOT: sdg.take
// CHECK: sdg.output "a2"
sdg.graph @late_refused dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %c = sdg.constant dense<0.5> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %v = sdg.unary tanh %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %h = sdg.merge %v[0] if <t eq 0>, %s[t] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %n = sdg.binary mul %h[t - 1], %c[] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[4], f32>
  %s = sdg.binary add %v[t], %n[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %b = sdg.merge %x[T - 1] if <t eq T - 1>, %bs[t] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %bn = sdg.binary mul %b[t + 1], %c[] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[4], f32>
  %bs = sdg.binary add %x[t], %bn[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %w = sdg.unary exp %b[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %a2 = sdg.merge %w[T - 1] if <t eq T - 1>, %s2[t] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %n2 = sdg.binary mul %a2[t + 1], %c[] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[4], f32>
  %s2 = sdg.binary add %w[t], %n2[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "h" %h[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "a2" %a2[t] domain [t] : !tidal.tensor<[4], f32>
}

// -----

// An RNN's input projection x[t] @ u, read by the recurrence at t and by its
// start at 0: it depends on inputs only, so it is one matmul over all t before
// the loop, read with takes; the recurrence's own matmul h[t - 1] @ w stays.
// CHECK-LABEL: sdg.graph @early
// CHECK: %[[P:.*]] = sdg.matmul %{{.*}}[0:T], %{{.*}}[] domain [] : ({{.*}}) -> !tidal.tensor<[T, 4], f32>
// CHECK: %[[S:.*]] = sdg.take 0 at <0> %[[P]][] domain []
// CHECK: sdg.unary tanh %[[S]][] domain []
// CHECK: sdg.matmul %{{.*}}[t - 1], %{{.*}}[] domain [t]
// CHECK: %[[R:.*]] = sdg.take 0 at <t> %[[P]][] domain [t]
// CHECK: sdg.binary add %{{.*}}[t], %[[R]][t] domain [t]
// NOEARLY-LABEL: sdg.graph @early
// NOEARLY: sdg.matmul %{{.*}}[t], %{{.*}}[] domain [t]
// NOEARLY-NOT: sdg.take
// NOEARLY: sdg.output "h"
sdg.graph @early dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %u = sdg.input "u" domain [] : !tidal.tensor<[4, 4], f32>
  %w = sdg.input "w" domain [] : !tidal.tensor<[4, 4], f32>
  %xu = sdg.matmul %x[t], %u[] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4, 4], f32>) -> !tidal.tensor<[4], f32>
  %h0 = sdg.unary tanh %xu[0] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %hw = sdg.matmul %h[t - 1], %w[] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4, 4], f32>) -> !tidal.tensor<[4], f32>
  %a = sdg.binary add %hw[t], %xu[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %n = sdg.unary tanh %a[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %h = sdg.merge %h0[] if <t eq 0>, %n[t] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "h" %h[t] domain [t] : !tidal.tensor<[4], f32>
}

// -----

// Refused: a projection read at t by a recurrence (g) but by a weight computed
// from another recurrence's last point (su from h[i, T - 1]: downstream of a
// cycle over t), and one read at t by an output only (no recurrence to take it
// out of).
// CHECK-LABEL: sdg.graph @early_refused
// CHECK-NOT: 0:T]
// CHECK-NOT: sdg.take
// CHECK: sdg.output "e"
sdg.graph @early_refused dims [i < I, t < T] {
  %x = sdg.input "x" domain [i, t] : !tidal.tensor<[4], f32>
  %u = sdg.input "u" domain [] : !tidal.tensor<[4, 4], f32>
  %h = sdg.merge %x[i, 0] if <t eq 0>, %n[i, t - 1] if <true> domain [i, t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %n = sdg.unary tanh %h[i, t] domain [i, t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %s = sdg.reduce sum [0] %h[i, T - 1] domain [i] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[], f32>
  %su = sdg.binary mul %u[], %s[i] domain [i] : (!tidal.tensor<[4, 4], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[4, 4], f32>
  %y = sdg.matmul %x[i, t], %su[i] domain [i, t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4, 4], f32>) -> !tidal.tensor<[4], f32>
  %g = sdg.merge %y[i, 0] if <t eq 0>, %ga[i, t] if <true> domain [i, t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %ga = sdg.binary add %g[i, t - 1], %y[i, t] domain [i, t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %e = sdg.matmul %x[i, t], %u[] domain [i, t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4, 4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "g" %g[i, t] domain [i, t] : !tidal.tensor<[4], f32>
  sdg.output "e" %e[i, t] domain [i, t] : !tidal.tensor<[4], f32>
}

// -----

// Refused: a cast read at t by a backward recurrence (c), ready before its loop,
// but of a merge with no value at t = 0: a[t - 1] of the recurrence a, whose
// catch-all case reads a'[t - 1] (the recurrence c needs it for t >= 1 only).
// Batched, the cast would need every point of the merge, t = 0 included.
// CHECK-LABEL: sdg.graph @early_partial
// CHECK: %[[M:.*]] = sdg.merge %{{.*}}[] if <t eq T - 1>, %{{.*}}[t - 1] if <true> domain [t]
// CHECK: sdg.cast %[[M]][t] domain [t]
// CHECK-NOT: sdg.take
// CHECK: sdg.output "c"
sdg.graph @early_partial dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[], f32>
  %a1 = sdg.merge %b[] if <t eq T - 1>, %th[t - 1] if <true> domain [t] : (!tidal.tensor<[3], f32>, !tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  %a = sdg.merge %b0[] if <t eq T - 1>, %b[] if <t eq T - 2>, %th[t] if <true> domain [t] : (!tidal.tensor<[3], f32>, !tidal.tensor<[3], f32>, !tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  %z = sdg.full 0.000000e+00 domain [] : !tidal.tensor<[3], f32>
  %b0 = sdg.binary add %z[], %x[T - 1] domain [] : (!tidal.tensor<[3], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[3], f32>
  %b = sdg.binary add %z[], %x[T - 2] domain [] : (!tidal.tensor<[3], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[3], f32>
  %th = sdg.unary tanh %a[t + 1] domain [t] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  %c0 = sdg.full 5.000000e-01 domain [] : !tidal.tensor<[2, 3], f64>
  %c = sdg.merge %c0[] if <t eq T - 1>, %s[t + 1] if <t lt T - 1> domain [t] : (!tidal.tensor<[2, 3], f64>, !tidal.tensor<[2, 3], f64>) -> !tidal.tensor<[2, 3], f64>
  %w = sdg.input "w" domain [] : !tidal.tensor<[3, 3], f64>
  %cw = sdg.matmul %c[t], %w[] domain [t] : (!tidal.tensor<[2, 3], f64>, !tidal.tensor<[3, 3], f64>) -> !tidal.tensor<[2, 3], f64>
  %ac = sdg.cast %a1[t] domain [t] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f64>
  %sum = sdg.binary add %cw[t], %ac[t] domain [t] : (!tidal.tensor<[2, 3], f64>, !tidal.tensor<[3], f64>) -> !tidal.tensor<[2, 3], f64>
  %s = sdg.unary sin %sum[t] domain [t] : (!tidal.tensor<[2, 3], f64>) -> !tidal.tensor<[2, 3], f64>
  sdg.output "c" %c[t] domain [t] : !tidal.tensor<[2, 3], f64>
}

// -----

// A matmul vectorized over t (its right operand has no t: (T, 3, 1) @ (1, 3)),
// then over i with both operands batched: the batch axes are aligned by an
// unsqueeze of the lower-rank one, (I, T, 3, 1) @ (I, 1, 1, 3), since the
// batch axes of a matmul broadcast from the right (fuzz seed 3939).
// CHECK-LABEL: sdg.graph @align
// CHECK: %[[U:.*]] = sdg.unsqueeze 1 %{{.*}}[0:I] domain [] : (!tidal.tensor<[1, 3], f32>) -> !tidal.tensor<[I, 1, 1, 3], f32>
// CHECK: sdg.matmul %{{.*}}[0:I, 0:T], %[[U]][] domain [] : (!tidal.tensor<[3, 1], f32>, !tidal.tensor<[I, 1, 1, 3], f32>) -> !tidal.tensor<[I, T, 3, 3], f32>
// NOEARLY-LABEL: sdg.graph @align
sdg.graph @align dims [i < I, t < T] {
  %a = sdg.input "a" domain [i, t] : !tidal.tensor<[3, 1], f32>
  %b = sdg.input "b" domain [i] : !tidal.tensor<[1, 3], f32>
  %m = sdg.matmul %a[i, t], %b[i] domain [i, t] : (!tidal.tensor<[3, 1], f32>, !tidal.tensor<[1, 3], f32>) -> !tidal.tensor<[3, 3], f32>
  %s = sdg.reduce sum [0] %m[i, 0:T] domain [i] : (!tidal.tensor<[3, 3], f32>) -> !tidal.tensor<[3, 3], f32>
  %r = sdg.reduce sum [0] %s[0:I] domain [] : (!tidal.tensor<[3, 3], f32>) -> !tidal.tensor<[3, 3], f32>
  sdg.output "r" %r[] domain [] : !tidal.tensor<[3, 3], f32>
}
