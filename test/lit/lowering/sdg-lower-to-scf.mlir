// sdg-schedule + sdg-lower-to-scf: each graph becomes a func.func over its
// bounds, with scf loops calling one private function per operator. The
// result uses upstream dialects only (besides the kept sdg.graph), prints,
// round-trips in custom and generic form and loads in mlir-opt.
// RUN: tidal-opt %s --load-pass-plugin=tidal.lowering.passes --pass-pipeline='builtin.module(sdg-schedule,sdg-lower-to-scf)' | FileCheck %s
// RUN: tidal-opt %s --load-pass-plugin=tidal.lowering.passes --sdg-schedule --sdg-lower-to-scf | tidal-opt | FileCheck %s
// RUN: tidal-opt %s --load-pass-plugin=tidal.lowering.passes --sdg-schedule --sdg-lower-to-scf --mlir-print-op-generic | tidal-opt | FileCheck %s
// RUN: tidal-opt %s --load-pass-plugin=tidal.lowering.passes --sdg-schedule --sdg-lower-to-scf | mlir-opt --load-dialect-plugin=%tidal_plugin | FileCheck %s
// RUN: tidal-opt %s --load-pass-plugin=tidal.lowering.passes --sdg-schedule --sdg-lower-to-scf --canonicalize --cse | FileCheck %s --check-prefix=CANON
// A body over separate-max-ops ops is not separated: it keeps its guards, one copy of each call.
// RUN: tidal-opt %s --load-pass-plugin=tidal.lowering.passes --pass-pipeline='builtin.module(sdg-schedule{separate-max-ops=2},sdg-lower-to-scf)' | FileCheck %s --check-prefix=GUARDED

!v = !tidal.tensor<[4], f32>

// n-step returns g[t] = sum(r[t:min(t + 3, T)]): g runs two steps behind r,
// in the same loop (prologue, steady state without guards, epilogue).
// CHECK-LABEL: sdg.graph @nstep
// CHECK-SAME:    tidal.schedule = "{ domain:
// CHECK:       func.func private @nstep_op1(index) attributes {tidal.graph = @nstep, tidal.op = "%1 = sdg.unary sigmoid", tidal.op_index = 1 : i64}
// CHECK:       func.func private @nstep_op2(index) attributes {tidal.graph = @nstep, tidal.op = "%2 = sdg.reduce sum", tidal.op_index = 2 : i64}
// CHECK-LABEL: func.func @nstep_run(
// CHECK-SAME:    %[[T:.*]]: index) attributes {tidal.bounds = ["T"], tidal.graph = @nstep}
// GUARDED-LABEL: func.func @nstep_run(
// GUARDED:         scf.for
// GUARDED:         scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// GUARDED:           scf.if %{{.*}} {
// GUARDED-NEXT:        {{(func.)?}}call @nstep_op0(%[[C]])
// GUARDED-NEXT:        {{(func.)?}}call @nstep_op1(%[[C]])
// GUARDED-NEXT:      }
// GUARDED:           {{(func.)?}}call @nstep_op2(
// GUARDED-NEXT:      {{(func.)?}}call @nstep_op3(
// GUARDED-NEXT:    }
// GUARDED-NEXT:    return
// CHECK:         scf.for
// CHECK:           call @nstep_op1(
// CHECK:         scf.for %[[C:.*]] = %{{.*}} to %[[T]] step %{{.*}} {
// CHECK-NEXT:      {{(func.)?}}call @nstep_op0(%[[C]])
// CHECK-NEXT:      {{(func.)?}}call @nstep_op1(%[[C]])
// CHECK-NEXT:      %[[D:.*]] = arith.subi %[[C]], %{{.*}} : index
// CHECK-NEXT:      {{(func.)?}}call @nstep_op2(%[[D]])
// CHECK-NEXT:      {{(func.)?}}call @nstep_op3(%[[D]])
// CHECK-NEXT:    }
// CHECK:         scf.for
// CHECK:           call @nstep_op2(
// CHECK:         return
// CANON-LABEL: func.func @nstep_run(
// CANON-COUNT-3: scf.for
sdg.graph @nstep dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %r = sdg.unary sigmoid %x[t] domain [t] : (!v) -> !v
  %g = sdg.reduce sum [0] %r[t:min(t + 3, T)] domain [t] : (!v) -> !v
  sdg.output "g" %g[t] domain [t] : !v
}

// Monte Carlo returns g[t] = sum(r[t:T]): the whole episode first, then g.
// Store lifetimes (lowering/lifetimes.py): x is freed after the episode loop,
// its last reader; g's store is allocated just before the loop that writes it;
// r is read until the end (no free); outputs are never freed.
// CHECK:       func.func private @mc_alloc2() attributes {tidal.graph = @mc, tidal.memory = "alloc", tidal.node = 2 : i64}
// CHECK-NEXT:  func.func private @mc_free0() attributes {tidal.graph = @mc, tidal.memory = "free", tidal.node = 0 : i64}
// CHECK-LABEL: func.func @mc_run(
// CHECK:         scf.for %[[C0:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      {{(func.)?}}call @mc_op0(%[[C0]])
// CHECK-NEXT:      {{(func.)?}}call @mc_op1(%[[C0]])
// CHECK-NEXT:    }
// CHECK-NEXT:    {{(func.)?}}call @mc_free0() : () -> ()
// CHECK-NEXT:    {{(func.)?}}call @mc_alloc2() : () -> ()
// CHECK-NOT:     call @mc_free
// CHECK:         scf.for
// CHECK:           call @mc_op2(
// CHECK:           call @mc_op3(
sdg.graph @mc dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %r = sdg.unary sigmoid %x[t] domain [t] : (!v) -> !v
  %g = sdg.reduce sum [0] %r[t:T] domain [t] : (!v) -> !v
  sdg.output "g" %g[t] domain [t] : !v
}

// Two dims and a per-iteration update; conditions become scf.if where they
// cannot be split off; 0-dimensional statements are calls without operands.
// CHECK-LABEL: func.func @train_run(
// CHECK-SAME:    %{{.*}}: index, %{{.*}}: index)
// CHECK:         call @train_op0() : () -> ()
// CHECK:         scf.for
// CHECK:           call @train_op2(%{{.*}}) : (index) -> ()
// CHECK:           scf.for
// CHECK:             call @train_op3(%{{.*}}, %{{.*}}) : (index, index) -> ()
// CHECK:           call @train_op5(%{{.*}}) : (index) -> ()
sdg.graph @train dims [i < I, t < T] {
  %w0 = sdg.param "W" dense<1.0> : tensor<4xf32> domain [] : !v
  %x = sdg.input "x" domain [i, t] : !v
  %w = sdg.merge %w0[] if <i eq 0>, %u[i - 1] if <true> domain [i] : (!v, !v) -> !v
  %p = sdg.binary mul %w[i], %x[i, t] domain [i, t] : (!v, !v) -> !v
  %g = sdg.reduce sum [0] %p[i, 0:T] domain [i] : (!v) -> !v
  %u = sdg.binary sub %w[i], %g[i] domain [i] : (!v, !v) -> !v
  sdg.output "w" %w[i] domain [i] : !v
}
