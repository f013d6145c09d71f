// What the C++ verifiers let through but the scheduler cannot handle fails
// sdg-schedule (and sdg-lower-to-scf, which re-derives the schedule's
// domains) with an error at the op at fault, never an internal error.
// RUN: tidal-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(sdg-schedule)'
// RUN: not tidal-opt %s --split-input-file --pass-pipeline='builtin.module(sdg-schedule)' 2>&1 | FileCheck %s
// CHECK-NOT: internal error
// CHECK-NOT: Traceback
// CHECK-NOT: :0:0:

!v = !tidal.tensor<[4], f32>

// A product of two steps is not affine: isl cannot represent it.
// CHECK: sdg-schedule-unsupported.mlir:[[@LINE+4]]:8: error: 'sdg.unary' operand 0 (%0[t * t]) cannot be scheduled: dependence `[t * t]` is not affine
sdg.graph @square dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{'sdg.unary' operand 0 (%0[t * t]) cannot be scheduled: dependence `[t * t]` is not affine: `t * t` is a product of two non-constant terms}}
  %y = sdg.unary neg %x[t * t] domain [t] : (!v) -> !v
  sdg.output "y" %y[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// Nor is a product of a step and a bound, or of two bounds.
sdg.graph @step_times_bound dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{'sdg.reduce' operand 0 (%0[0:T * T]) cannot be scheduled: dependence `[0:T * T]` is not affine: `T * T` is a product}}
  %s = sdg.reduce sum [0] %x[0:T * T] domain [] : (!v) -> !v
  sdg.output "s" %s[] domain [] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

sdg.graph @step_times_bound2 dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{'sdg.unary' operand 0 (%0[t * T - t]) cannot be scheduled}}
  %y = sdg.unary neg %x[t * T - t] domain [t] : (!v) -> !v
  sdg.output "y" %y[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// Division by a bound is not a symbolic expression at all.
sdg.graph @floordiv_bound dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{'sdg.unary' operand 0 (%0[t floordiv T]) is not a valid symbolic expression: `t // T`: the divisor `T` is not a constant}}
  %y = sdg.unary neg %x[t floordiv T] domain [t] : (!v) -> !v
  sdg.output "y" %y[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

sdg.graph @mod_bound dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{'sdg.unary' operand 0 (%0[t mod T]) is not a valid symbolic expression: `t % T`}}
  %y = sdg.unary neg %x[t mod T] domain [t] : (!v) -> !v
  sdg.output "y" %y[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// A dependence that reads a step the consumer's domain does not have.
sdg.graph @foreign_step dims [t < T, i < I] {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{'sdg.unary' operand 0 (%0[i]) uses i, which the op's domain does not provide (it may use its steps and the bounds: I, T, t)}}
  %y = sdg.unary exp %x[i] domain [t] : (!v) -> !v
  sdg.output "y" %y[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// One component too many for the producer's domain.
sdg.graph @too_many_components dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{'sdg.unary' operand 0 (%0[t, 0]): the dependence has 2 components but the producer's domain [t] has 1 dimension}}
  %y = sdg.unary exp %x[t, 0] domain [t] : (!v) -> !v
  sdg.output "y" %y[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// A merge condition that is not affine.
sdg.graph @merge_condition dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{'sdg.merge' branch 0 condition <t * t eq 4> cannot be scheduled: condition `t * t == 4` is not affine}}
  %s = sdg.merge %x[t] if <t * t eq 4>, %x[t] if <true> domain [t] : (!v, !v) -> !v
  sdg.output "s" %s[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// A merge condition that is not a condition.
sdg.graph @merge_condition_int dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{'sdg.merge' branch 0 condition <t + 1> is not a condition (a boolean expression)}}
  %s = sdg.merge %x[t] if <t + 1>, %x[t] if <true> domain [t] : (!v, !v) -> !v
  sdg.output "s" %s[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// The condition of a conditional output is a discardable attribute: nothing
// verifies it before the scheduler reads it.
sdg.graph @output_condition dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{'sdg.output' condition <t * t eq 4> cannot be scheduled: condition `t * t == 4` is not affine}}
  sdg.output "y" %x[t] domain [t] {cond = #tidal.expr<t * t eq 4>} : !v
}

// -----

!v = !tidal.tensor<[4], f32>

sdg.graph @output_condition_foreign dims [t < T, i < I] {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{'sdg.output' condition <i eq 4> uses i, which the op's domain does not provide}}
  sdg.output "y" %x[t] domain [t] {cond = #tidal.expr<i eq 4>} : !v
}

// -----

!v = !tidal.tensor<[4], f32>

sdg.graph @output_condition_attr dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{'sdg.output' attribute 'cond' is not a condition: expected a #tidal.expr attribute, got 3 : i64}}
  sdg.output "y" %x[t] domain [t] {cond = 3 : i64} : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// `floor` is a fine dimension name, but isl spells it `floor_`, which is
// also the name of the bound here.
// expected-error @+1 {{sdg.graph @clash: the dimension names 'floor' and 'floor_' are the same name in isl ('floor_'); rename one}}
sdg.graph @clash dims [floor < T, t < floor_] {
  %x = sdg.input "x" domain [floor, t] : !v
  sdg.output "x" %x[floor, t] domain [floor, t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// A merge none of whose conditions ever holds: every point of the output
// needs a value no branch defines.
// CHECK: error: cannot schedule @never: 'sdg.output "s"'
// CHECK: no branch condition holds (<false>)
sdg.graph @never dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{no branch condition holds (<false>)}}
  %s = sdg.merge %x[t] if <false> domain [t] : (!v) -> !v
  sdg.output "s" %s[t] domain [t] : !v
}
