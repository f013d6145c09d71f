// sdg-dce: keep what the outputs (and UDFs) need, erase the rest, dead
// cycles included.
// RUN: tidal-opt %s --split-input-file --sdg-dce | FileCheck %s
// RUN: tidal-opt %s --split-input-file --pass-pipeline='builtin.module(sdg-dce{keep-udfs=false})' | FileCheck %s --check-prefix=NOUDF
// Upstream canonicalize/remove-dead-values erase dead *pure* ops, cycles
// included (region DCE), but not a dead cycle through sdg.merge (which has
// no memory-effect interface, so unknown effects) nor an unread input:
// RUN: tidal-opt %s --split-input-file --pass-pipeline='builtin.module(canonicalize,cse,remove-dead-values)' | FileCheck %s --check-prefix=UPSTREAM
// The result is a fixed point and still verifies:
// RUN: tidal-opt %s --split-input-file --sdg-dce --sdg-dce --canonicalize | FileCheck %s

!v = !tidal.tensor<[4], f32>

// A dead chain, a dead cycle through a merge and a dead cycle of pure ops.
// CHECK-LABEL: sdg.graph @dead_cycles
// CHECK-NEXT:    %[[X:.*]] = sdg.input "x"
// CHECK-NEXT:    %[[Y:.*]] = sdg.unary exp %[[X]][t]
// CHECK-NEXT:    sdg.output "y" %[[Y]][t]
// CHECK-NEXT:  }
// UPSTREAM-LABEL: sdg.graph @dead_cycles
// UPSTREAM:        sdg.input "unused"
// UPSTREAM:        sdg.merge
// UPSTREAM-NEXT:   sdg.unary tanh
// UPSTREAM-NOT:    sdg.binary add
// UPSTREAM:        sdg.output "y"
sdg.graph @dead_cycles dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %unused = sdg.input "unused" domain [t] : !v
  %y = sdg.unary exp %x[t] domain [t] : (!v) -> !v
  %chain = sdg.unary log %y[t] domain [t] : (!v) -> !v
  %a = sdg.merge %x[0] if <t eq 0>, %b[t - 1] if <true> domain [t] : (!v, !v) -> !v
  %b = sdg.unary tanh %a[t] domain [t] : (!v) -> !v
  %p = sdg.binary add %q[t], %x[t] domain [t] : (!v, !v) -> !v
  %q = sdg.unary neg %p[t] domain [t] : (!v) -> !v
  sdg.output "y" %y[t] domain [t] : !v
}

// -----
// An island whose result nothing reads goes like any dead op; a read one stays.
!v = !tidal.tensor<[4], f32>
// CHECK-LABEL: sdg.graph @islands
// CHECK: %[[L:.*]] = sdg.island %{{.*}}[t] domain [t]
// CHECK-NOT: sdg.island
// CHECK: sdg.output "live" %[[L]][t]
sdg.graph @islands dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %live = sdg.island %x[t] domain [t] : (!v) -> !v {
  ^bb0(%a: !v):
    %e = sdg.unary exp %a[t] domain [t] : (!v) -> !v
    %n = sdg.unary neg %e[t] domain [t] : (!v) -> !v
    sdg.yield %n : !v
  }
  %dead = sdg.island %x[t] domain [t] : (!v) -> !v {
  ^bb0(%a: !v):
    %e = sdg.unary sin %a[t] domain [t] : (!v) -> !v
    %n = sdg.unary cos %e[t] domain [t] : (!v) -> !v
    sdg.yield %n : !v
  }
  sdg.output "live" %live[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// A live recurrence (a cycle an output reaches) stays whole. (sdg.full, not
// sdg.constant: canonicalize aborts on the latter, a ConstantLike op with no
// folder.)
// CHECK-LABEL: sdg.graph @recurrence
// CHECK-NEXT:    sdg.input "x"
// CHECK-NEXT:    sdg.full
// CHECK-NEXT:    sdg.merge
// CHECK-NEXT:    sdg.binary mul
// CHECK-NEXT:    sdg.binary add
// CHECK-NEXT:    sdg.output "s"
// CHECK-NEXT:  }
sdg.graph @recurrence dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %half = sdg.full 5.000000e-01 domain [] : !tidal.tensor<[], f32>
  %s = sdg.merge %x[0] if <t eq 0>, %n[t] if <true> domain [t] : (!v, !v) -> !v
  %d = sdg.binary mul %s[t - 1], %half[] domain [t] : (!v, !tidal.tensor<[], f32>) -> !v
  %n = sdg.binary add %d[t], %x[t] domain [t] : (!v, !v) -> !v
  sdg.output "s" %s[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// A UDF has external effects: it stays with what it reads, unless
// keep-udfs=false, when only its outputs' needs count.
// CHECK-LABEL: sdg.graph @udf
// CHECK-NEXT:    sdg.input "x"
// CHECK-NEXT:    sdg.unary exp
// CHECK-NEXT:    sdg.udf "env.log"
// CHECK-NEXT:    sdg.output "x"
// CHECK-NEXT:  }
// NOUDF-LABEL: sdg.graph @udf
// NOUDF-NEXT:    sdg.input "x"
// NOUDF-NEXT:    sdg.output "x"
// NOUDF-NEXT:  }
sdg.graph @udf dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %e = sdg.unary exp %x[t] domain [t] : (!v) -> !v
  %o, %r = sdg.udf "env.log"(%e[t]) domain [t] : (!v) -> (!v, !tidal.tensor<[], f32>)
  sdg.output "x" %x[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// A UDF whose result an output reads stays, even with keep-udfs=false.
// CHECK-LABEL: sdg.graph @udf_used
// CHECK:         sdg.udf "env.step"
// NOUDF-LABEL: sdg.graph @udf_used
// NOUDF-NEXT:    sdg.input "a"
// NOUDF-NEXT:    sdg.udf "env.step"
// NOUDF-NEXT:    sdg.output "obs"
sdg.graph @udf_used dims [t < T] {
  %a = sdg.input "a" domain [t] : !tidal.tensor<[], i64>
  %obs, %rew = sdg.udf "env.step"(%a[t]) domain [t] : (!tidal.tensor<[], i64>) -> (!v, !tidal.tensor<[], f32>)
  sdg.output "obs" %obs[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// Without outputs or UDFs a graph empties; every graph of the module is
// cleaned, and ops outside graphs are untouched.
// CHECK-LABEL: sdg.graph @no_outputs
// CHECK-NEXT:  }
// CHECK-LABEL: sdg.graph @second
// CHECK-NEXT:    sdg.input "w"
// CHECK-NEXT:    sdg.output "w"
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @untouched
// CHECK-NEXT:    arith.constant
sdg.graph @no_outputs dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %y = sdg.unary exp %x[t] domain [t] : (!v) -> !v
}
sdg.graph @second dims [t < T] {
  %w = sdg.input "w" domain [t] : !v
  %r = sdg.random normal seed 0 domain [t] : !v
  sdg.output "w" %w[t] domain [t] : !v
}
func.func @untouched() -> i32 {
  %c = arith.constant 1 : i32
  return %c : i32
}
