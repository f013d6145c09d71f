// Upstream `cse` on sdg graphs (issue 12 item 4, "CSE that treats two ops as equal
// only when their dependences are equal"): dependences and domains are attributes,
// so two ops merge only when kind, operands, dependences and domain all agree.
// The default pipeline runs it right after sdg-simplify, whose hoisting makes the
// copies of a value over several dims equal.
// RUN: tidal-opt %s --cse | FileCheck %s
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-simplify{rewrites=hoist},cse)' | FileCheck %s --check-prefix=HOISTED

// CHECK-LABEL: sdg.graph @deps
// CHECK: %[[X:.*]] = sdg.input "x" domain [t]
// CHECK: %[[A:.*]] = sdg.unary exp %[[X]][t] domain [t]
// CHECK-NOT: sdg.unary exp %[[X]][t] domain [t]
// CHECK: %[[C:.*]] = sdg.unary exp %[[X]][t - 1] domain [t]
// CHECK: sdg.binary add %[[A]][t], %[[A]][t] domain [t]
// CHECK: sdg.binary add %[[A]][t], %[[C]][t] domain [t]
sdg.graph @deps dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %a = sdg.unary exp %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %b = sdg.unary exp %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %c = sdg.unary exp %x[t - 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %s = sdg.binary add %a[t], %b[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %d = sdg.binary add %a[t], %c[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "s" %s[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "d" %d[t] domain [t] : !tidal.tensor<[4], f32>
}

// The same weight transform written once per i and once per (i, t): different
// domains, so cse alone keeps both; hoisted out of t, they are equal and merge.
// CHECK-LABEL: sdg.graph @domains
// CHECK-COUNT-2: sdg.unary tanh
// HOISTED-LABEL: sdg.graph @domains
// HOISTED: sdg.unary tanh %{{.*}}[i] domain [i]
// HOISTED-NOT: sdg.unary tanh
sdg.graph @domains dims [i < I, t < T] {
  %w = sdg.input "w" domain [i] : !tidal.tensor<[4], f32>
  %x = sdg.input "x" domain [i, t] : !tidal.tensor<[4], f32>
  %u = sdg.unary tanh %w[i] domain [i] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %v = sdg.unary tanh %w[i] domain [i, t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %y = sdg.binary mul %x[i, t], %v[i, t] domain [i, t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "u" %u[i] domain [i] : !tidal.tensor<[4], f32>
  sdg.output "y" %y[i, t] domain [i, t] : !tidal.tensor<[4], f32>
}
