// RUN: tidal-opt %s --split-input-file --pass-pipeline='builtin.module(sdg-verify-dependences)' --verify-diagnostics | FileCheck %s

// A valid graph (windows, suffixes, n-step, constant slices, a cycle) is
// left unchanged.
// CHECK-LABEL: sdg.graph @valid
// CHECK: sdg.reduce sum [0] %{{.*}}[t:min(t + 3, T)] domain [t]
sdg.graph @valid dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %s = sdg.merge %x[0] if <t eq 0>, %n[t] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %n = sdg.binary add %s[t - 1], %x[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %w = sdg.reduce sum [0] %x[max(0, t - 2):t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %g = sdg.reduce sum [0] %x[t:min(t + 3, T)] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %a = sdg.reduce sum [0] %x[0:T] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "s" %s[t] domain [t] : !tidal.tensor<[4], f32>
}

// -----
sdg.graph @too_many_components dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{'sdg.unary' operand 0 (%0[t, 0]): the dependence has 2 components but the producer's domain [t] has 1 dimension}}
  %y = sdg.unary exp %x[t, 0] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
}

// -----
sdg.graph @foreign_step dims [t < T, i < I] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{component 'i' uses i, which the consumer's domain does not provide}}
  %y = sdg.unary exp %x[i] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
}

// -----
sdg.graph @negative_slices dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{component 't + 1:t' is not a valid slice: slice `t + 1:t` may have a negative size}}
  %w = sdg.reduce sum [0] %x[t + 1:t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  // expected-error@+1 {{component 't:3' is not a valid slice: slice `t:3` may have a negative size `-t + 3` (e.g. at t=4, T=5)}}
  %v = sdg.reduce sum [0] %x[t:3] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
}

// -----
sdg.graph @output_and_merge dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{'sdg.merge' operand 1 (%1[t - 1, t]): the dependence has 2 components but the producer's domain [t] has 1 dimension}}
  %m = sdg.merge %x[0] if <t eq 0>, %m[t - 1, t] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  // expected-error@+1 {{'sdg.output' operand 0 (%0[]): the dependence has 0 components but the producer's domain [t] has 1 dimension}}
  sdg.output "x" %x[] domain [] : !tidal.tensor<[4], f32>
}
