// Graphs the verifiers accept schedule and lower, whatever their names:
// dimension names isl reserves (`floor`, `exists`), a bound named like the
// loop iterators isl generates (`c0`), a graph name that needs quoting, an
// empty graph, and an output that can be computed only for some bounds
// (`x[0] + x[1]` needs T >= 2: the ops run under that guard, the input only
// at the two points read; the runtime checks the bounds before a run, see
// GraphSchedule.check_bounds).
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-schedule,sdg-lower-to-scf)' | FileCheck %s
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-schedule,sdg-lower-to-scf,sdg-lower-to-scf)' | tidal-opt | FileCheck %s

!v = !tidal.tensor<[4], f32>

// CHECK-LABEL: func.func @keywords_run(
// CHECK-SAME:    %[[E:.*]]: index, %[[T:.*]]: index) attributes {tidal.bounds = ["exists", "T"], tidal.graph = @keywords}
// CHECK:         scf.for %[[F:.*]] = %{{.*}} to %[[E]] step
// CHECK-NEXT:      scf.for %[[C:.*]] = %{{.*}} to %[[T]] step
// CHECK-NEXT:        call @keywords_op0(%[[F]], %[[C]])
// CHECK:             call @keywords_op5(%[[F]], %[[C]])
// CHECK:           call @keywords_op6(
sdg.graph @keywords dims [floor < exists, t < T] {
  %x = sdg.input "x" domain [floor, t] : !v
  %s = sdg.merge %x[floor, t] if <t eq 0>, %y[floor, t - 1] if <true> domain [floor, t] : (!v, !v) -> !v
  %y = sdg.unary exp %s[floor, t] domain [floor, t] : (!v) -> !v
  %w = sdg.reduce sum [0] %y[floor, max(0, t - 2):t + 1] domain [floor, t] : (!v) -> !v
  %l = sdg.reduce sum [0] %x[exists - 1 - floor, 0:T] domain [floor] : (!v) -> !v
  sdg.output "w" %w[floor, t] domain [floor, t] : !v
  sdg.output "l" %l[floor] domain [floor] : !v
}

// CHECK-LABEL: func.func @"a graph_run"(
// CHECK-SAME:    %[[B:.*]]: index) attributes {tidal.bounds = ["c0"], tidal.graph = @"a graph"}
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %[[B]] step
// CHECK-NEXT:      call @"a graph_op0"(%[[I]])
// CHECK-NEXT:      call @"a graph_op1"(%[[I]])
sdg.graph @"a graph" dims [t < c0] {
  %x = sdg.input "x" domain [t] : !v
  sdg.output "x" %x[t] domain [t] : !v
}

// CHECK-LABEL: func.func @empty_run(
// CHECK-NEXT:    return
sdg.graph @empty dims [t < T] {
}

// CHECK-LABEL: sdg.graph @pair
// CHECK-SAME:    S0[t] : T >= 2 and 0 <= t <= 1
// CHECK-SAME:    S1[] : T >= 2
// CHECK-LABEL: func.func @pair_run(
// CHECK-SAME:    %[[T:.*]]: index)
// CHECK:         %[[C2:.*]] = arith.constant 2 : index
// CHECK:         %[[OK:.*]] = arith.cmpi sge, %[[T]], %[[C2]] : index
// CHECK-NEXT:    scf.if %[[OK]] {
// CHECK-NEXT:      scf.for %[[I:.*]] = %{{.*}} to %[[C2]] step
// CHECK-NEXT:        call @pair_op0(%[[I]])
// CHECK-NEXT:      }
// CHECK-NEXT:      call @pair_op1()
// CHECK-NEXT:      call @pair_op2()
// CHECK-NEXT:    }
sdg.graph @pair dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %y = sdg.binary add %x[0], %x[1] domain [] : (!v, !v) -> !v
  sdg.output "y" %y[] domain [] : !v
}
