// A tidal.schedule attribute written by hand (or left over from an older
// graph) fails sdg-lower-to-scf with an error at the graph or the op at
// fault, never an internal error.
// RUN: tidal-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(sdg-lower-to-scf)'
// RUN: not tidal-opt %s --split-input-file --pass-pipeline='builtin.module(sdg-lower-to-scf)' 2>&1 | FileCheck %s
// CHECK-NOT: internal error
// CHECK-NOT: Traceback
// CHECK-NOT: :0:0:

!v = !tidal.tensor<[4], f32>

// CHECK: sdg-lower-to-scf-invalid.mlir:[[@LINE+2]]:1: error: the tidal.schedule attribute of sdg.graph @not_a_string is not a string (re-run sdg-schedule)
// expected-error @+1 {{the tidal.schedule attribute of sdg.graph @not_a_string is not a string (re-run sdg-schedule)}}
sdg.graph @not_a_string dims [t < T] attributes {tidal.schedule = 3 : i64} {
  %x = sdg.input "x" domain [t] : !v
  sdg.output "x" %x[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// A schedule with no order: the output may run before the input.
sdg.graph @unordered dims [t < T] attributes {tidal.schedule = "{ domain: \"[T] -> { S0[t] : 0 <= t < T; S1[t] : 0 <= t < T }\" }"} {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{the schedule attribute of @unordered violates a dependence (re-run sdg-schedule)}}
  sdg.output "x" %x[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// The graph was edited after scheduling: its dependence is not affine.
sdg.graph @edited dims [t < T] attributes {tidal.schedule = "{ domain: \"[T] -> { S0[t] : 0 <= t < T; S1[t] : 0 <= t < T; S2[t] : 0 <= t < T }\" }"} {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{'sdg.unary' operand 0 (%0[t * t]) cannot be scheduled: dependence `[t * t]` is not affine}}
  %y = sdg.unary neg %x[t * t] domain [t] : (!v) -> !v
  sdg.output "y" %y[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

sdg.graph @unparsable dims [t < T] attributes {tidal.schedule = "{ domain: \"[T] -> { S0[t] : 0 <= t < T; S1[t] : 0 <= t < T }\" }"} {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{'sdg.output' operand 0 (%0[t floordiv 0]) is not a valid symbolic expression}}
  sdg.output "x" %x[t floordiv 0] domain [t] : !v
}
