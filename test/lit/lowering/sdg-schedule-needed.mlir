// Each operator runs only at the points that an output or a UDF needs
// (lowering/needed.py) and that can be computed: the schedule's domains are
// the valid domains restricted to the needed points.
//
// @window: s[0] = x[0]; s[t] = max(x[max(0, t - 2):t]). The max is needed
// only where its merge branch applies (t >= 1): at t = 0 its window is
// empty and running it would fail. %dead is read by nothing: not scheduled.
// x[T - 1] is read by nothing either (the input is still loaded whole).
// @last: exp read at t = T - 1 only runs once, not T times.
// @stride: s[t] = s[t - 2] + x[t] read only at T - 1 (needed grows one step
// per round: isl's transitive closure of the reads) runs at every other t.
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-schedule)' | FileCheck %s
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-schedule,sdg-lower-to-scf)' | FileCheck %s --check-prefix=SCF

!v = !tidal.tensor<[4], f32>

// CHECK-LABEL: sdg.graph @window
// CHECK-SAME:    domain: \22[T] -> { S4[t] : 0 <= t < T; S1[t] : 0 < t < T; S2[t] : 0 <= t < T; S0[t] : 0 <= t <= -2 + T; S0[t = 0] : T > 0 }\22
// CHECK-NOT:     S3[
// CHECK-SAME:    }"}
// SCF-LABEL:   func.func @window_run(
// SCF-NOT:       call @window_op3
// SCF:           scf.for %[[T:.*]] = %[[C1:.*]] to %{{.*}} step %[[C1]] {
// SCF:             func.call @window_op1(%[[T]])
// SCF:           }
// SCF-NOT:       call @window_op1
// SCF:           return
sdg.graph @window dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %m = sdg.reduce max [0] %x[max(0, t - 2):t] domain [t] : (!v) -> !v
  %s = sdg.merge %x[0] if <t eq 0>, %m[t] if <true> domain [t] : (!v, !v) -> !v
  %dead = sdg.reduce min [0] %x[0:t] domain [t] : (!v) -> !v
  sdg.output "s" %s[t] domain [t] : !v
}

// CHECK-LABEL: sdg.graph @last
// CHECK-SAME:    domain: \22[T] -> { S1[t = -1 + T] : T > 0; S2[] : T > 0; S0[t = -1 + T] : T > 0 }\22
// SCF-LABEL:   func.func @last_run(
// SCF-SAME:      %[[T:.*]]: index)
// SCF-NEXT:      %[[C1:.*]] = arith.constant 1 : index
// SCF-NEXT:      %[[L:.*]] = arith.subi %[[T]], %[[C1]] : index
// SCF-NEXT:      call @last_op0(%[[L]])
// SCF-NEXT:      call @last_alloc1()
// SCF-NEXT:      call @last_op1(%[[L]])
// SCF-NEXT:      call @last_free0()
// SCF-NEXT:      call @last_op2()
// SCF-NEXT:      return
sdg.graph @last dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %y = sdg.unary exp %x[t] domain [t] : (!v) -> !v
  sdg.output "y" %y[T - 1] domain [] : !v
}

// CHECK-LABEL: sdg.graph @stride
// CHECK-SAME:    S1[t] : (1 + T + t) mod 2 = 0 and 0 <= t < T;
// CHECK-SAME:    S2[t] : (1 + T + t) mod 2 = 0 and 0 <= t <= -3 + T;
// SCF-LABEL:   func.func @stride_run(
// SCF:           %[[C2:.*]] = arith.constant 2 : index
// SCF:           scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %[[C2]] {
// SCF:             func.call @stride_op2(
// SCF:             func.call @stride_op1(%[[T]]) {tidal.branches = array<i64: 1>}
// SCF-NEXT:      }
sdg.graph @stride dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %s = sdg.merge %x[t] if <t lt 2>, %n[t - 2] if <true> domain [t] : (!v, !v) -> !v
  %n = sdg.binary add %s[t], %x[t + 2] domain [t] : (!v, !v) -> !v
  sdg.output "s" %s[T - 1] domain [] : !v
}
