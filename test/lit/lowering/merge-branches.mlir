// sdg-lower-to-scf marks each call of a merge with the branches that can hold
// at the instances that call runs (lowering/merge_branches.py), when that is
// not all of them: a loop inside XLA then selects between those only.
//
// @rnn: h[0] = h0 before the loop (branch 0 only), h[t] = f(h[t-1]) in it
// (branch 1 only).
// @both: isl splits the merge's loop in three; the first, 0 <= t < T - 2,
// runs instances of both branches (t < 2 and t >= 2): its call has no
// attribute; the two others one branch each.
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-schedule,sdg-lower-to-scf)' | FileCheck %s

!v = !tidal.tensor<[4], f32>

// CHECK-LABEL: func.func @rnn_run(
// CHECK:         call @rnn_op2(%{{.*}}) {tidal.branches = array<i64: 0>} : (index) -> ()
// CHECK:         scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           func.call @rnn_op1(%[[T]]) : (index) -> ()
// CHECK:           func.call @rnn_op2(%[[T]]) {tidal.branches = array<i64: 1>} : (index) -> ()
// CHECK:         }
sdg.graph @rnn dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %n = sdg.binary add %h[t - 1], %x[t] domain [t] : (!v, !v) -> !v
  %h = sdg.merge %x[0] if <t eq 0>, %n[t] if <true> domain [t] : (!v, !v) -> !v
  sdg.output "h" %h[t] domain [t] : !v
}

// CHECK-LABEL: func.func @both_run(
// CHECK:         scf.for
// CHECK:           func.call @both_op1(%{{.*}}) : (index) -> ()
// CHECK:         scf.for
// CHECK:           func.call @both_op1(%{{.*}}) {tidal.branches = array<i64: 0>} : (index) -> ()
// CHECK:         scf.for
// CHECK:           func.call @both_op1(%{{.*}}) {tidal.branches = array<i64: 1>} : (index) -> ()
// CHECK:         return
sdg.graph @both dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %s = sdg.merge %x[t] if <t lt 2>, %x[t - 2] if <true> domain [t] : (!v, !v) -> !v
  sdg.output "s" %s[t] domain [t] : !v
}
