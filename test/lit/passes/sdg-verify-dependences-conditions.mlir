// sdg-verify-dependences checks conditions too: merge branch conditions must
// be boolean, and the condition of a conditional output (a discardable
// attribute the C++ verifiers never see) must be a boolean #tidal.expr over
// the output's steps and the bounds.
// RUN: tidal-opt %s --split-input-file --pass-pipeline='builtin.module(sdg-verify-dependences)' --verify-diagnostics
// RUN: not tidal-opt %s --split-input-file --pass-pipeline='builtin.module(sdg-verify-dependences)' 2>&1 | FileCheck %s
// CHECK-NOT: internal error

!v = !tidal.tensor<[4], f32>

// CHECK: sdg-verify-dependences-conditions.mlir:[[@LINE+4]]:8: error: 'sdg.merge' branch 0 condition 't + 1' is not a condition (a boolean expression)
sdg.graph @integer_branch dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{'sdg.merge' branch 0 condition 't + 1' is not a condition (a boolean expression)}}
  %s = sdg.merge %x[t] if <t + 1>, %x[t] if <true> domain [t] : (!v, !v) -> !v
  sdg.output "s" %s[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

sdg.graph @output_conditions dims [t < T, i < I] {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{'sdg.output' condition 'i eq 4' uses i, which the consumer's domain does not provide}}
  sdg.output "a" %x[t] domain [t] {cond = #tidal.expr<i eq 4>} : !v
  // expected-error @+1 {{'sdg.output' condition 't + 4' is not a condition (a boolean expression)}}
  sdg.output "b" %x[t] domain [t] {cond = #tidal.expr<t + 4>} : !v
  // expected-error @+1 {{'sdg.output' attribute 'cond' must be a #tidal.expr condition, got 3 : i64}}
  sdg.output "c" %x[t] domain [t] {cond = 3 : i64} : !v
  // expected-error @+1 {{'sdg.output' condition 't floordiv T eq 0' is not a valid symbolic expression}}
  sdg.output "d" %x[t] domain [t] {cond = #tidal.expr<t floordiv T eq 0>} : !v
  // A valid one.
  sdg.output "e" %x[t] domain [t] {cond = #tidal.expr<t mod 2 eq 0 and t lt T - 1>} : !v
}
