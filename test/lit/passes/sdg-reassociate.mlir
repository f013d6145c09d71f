// RUN: tidal-opt %s --split-input-file --sdg-reassociate | FileCheck %s
// RUN: tidal-opt %s --split-input-file --pass-pipeline='builtin.module(sdg-reassociate{bound=2})' | FileCheck %s --check-prefix=SMALL

// (k[0:t+1] @ W) @ V with W, V weights: W @ V moves out of t (computed once), then
// (t + 1) x 8 x 2 per t instead of (t + 1) x 64 x (8 + 2).
// CHECK-LABEL: sdg.graph @scores
// CHECK: %[[W:.*]] = sdg.input "w" domain []
// CHECK: %[[V:.*]] = sdg.input "v" domain []
// CHECK: %[[WV:.*]] = sdg.matmul %[[W]][], %[[V]][] domain [] : (!tidal.tensor<[8, 64], f32>, !tidal.tensor<[64, 2], f32>) -> !tidal.tensor<[8, 2], f32>
// CHECK: %[[S:.*]] = sdg.matmul %{{.*}}[0:t + 1], %[[WV]][] domain [t] : (!tidal.tensor<[8], f32>, !tidal.tensor<[8, 2], f32>) -> !tidal.tensor<[t + 1, 2], f32>
// CHECK: sdg.output "s" %[[S]][t]
sdg.graph @scores dims [t < T] {
  %k = sdg.input "k" domain [t] : !tidal.tensor<[8], f32>
  %w = sdg.input "w" domain [] : !tidal.tensor<[8, 64], f32>
  %v = sdg.input "v" domain [] : !tidal.tensor<[64, 2], f32>
  %p = sdg.matmul %k[0:t + 1], %w[] domain [t] : (!tidal.tensor<[8], f32>, !tidal.tensor<[8, 64], f32>) -> !tidal.tensor<[t + 1, 64], f32>
  %s = sdg.matmul %p[t], %v[] domain [t] : (!tidal.tensor<[t + 1, 64], f32>, !tidal.tensor<[64, 2], f32>) -> !tidal.tensor<[t + 1, 2], f32>
  sdg.output "s" %s[t] domain [t] : !tidal.tensor<[t + 1, 2], f32>
}

// -----

// Worth it only for long enough runs: W @ V (8 x 64 x 64 once) against (t + 1) x 64 x 64
// more per t. At the default bound (256) it pays; with every bound 2 it does not.
// CHECK-LABEL: sdg.graph @grow
// CHECK: sdg.matmul %{{.*}}[], %{{.*}}[] domain [] : (!tidal.tensor<[8, 64], f32>, !tidal.tensor<[64, 64], f32>) -> !tidal.tensor<[8, 64], f32>
// SMALL-LABEL: sdg.graph @grow
// SMALL: %[[P:.*]] = sdg.matmul %{{.*}}[0:t + 1], %{{.*}}[] domain [t]
// SMALL: sdg.matmul %[[P]][t], %{{.*}}[] domain [t]
sdg.graph @grow dims [t < T] {
  %k = sdg.input "k" domain [t] : !tidal.tensor<[8], f32>
  %w = sdg.input "w" domain [] : !tidal.tensor<[8, 64], f32>
  %v = sdg.input "v" domain [] : !tidal.tensor<[64, 64], f32>
  %p = sdg.matmul %k[0:t + 1], %w[] domain [t] : (!tidal.tensor<[8], f32>, !tidal.tensor<[8, 64], f32>) -> !tidal.tensor<[t + 1, 64], f32>
  %s = sdg.matmul %p[t], %v[] domain [t] : (!tidal.tensor<[t + 1, 64], f32>, !tidal.tensor<[64, 64], f32>) -> !tidal.tensor<[t + 1, 64], f32>
  sdg.output "s" %s[t] domain [t] : !tidal.tensor<[t + 1, 64], f32>
}

// -----

// The other way round: A @ (B @ C) with a wide inner product and a thin A becomes
// (A @ B) @ C; both operands of the moved product vary with t, so it stays over t.
// CHECK-LABEL: sdg.graph @right
// CHECK: %[[AB:.*]] = sdg.matmul %{{.*}}[t], %{{.*}}[t] domain [t] : (!tidal.tensor<[1, 4], f32>, !tidal.tensor<[4, 64], f32>) -> !tidal.tensor<[1, 64], f32>
// CHECK: sdg.matmul %[[AB]][t], %{{.*}}[t] domain [t] : (!tidal.tensor<[1, 64], f32>, !tidal.tensor<[64, 3], f32>) -> !tidal.tensor<[1, 3], f32>
sdg.graph @right dims [t < T] {
  %a = sdg.input "a" domain [t] : !tidal.tensor<[1, 4], f32>
  %b = sdg.input "b" domain [t] : !tidal.tensor<[4, 64], f32>
  %c = sdg.input "c" domain [t] : !tidal.tensor<[64, 3], f32>
  %bc = sdg.matmul %b[t], %c[t] domain [t] : (!tidal.tensor<[4, 64], f32>, !tidal.tensor<[64, 3], f32>) -> !tidal.tensor<[4, 3], f32>
  %r = sdg.matmul %a[t], %bc[t] domain [t] : (!tidal.tensor<[1, 4], f32>, !tidal.tensor<[4, 3], f32>) -> !tidal.tensor<[1, 3], f32>
  sdg.output "r" %r[t] domain [t] : !tidal.tensor<[1, 3], f32>
}

// -----

// Refused: already the cheaper association; an inner product read by another op
// too; a vector operand; a chain on a cycle.
// CHECK-LABEL: sdg.graph @refused
// CHECK: %[[P:.*]] = sdg.matmul %{{.*}}[t], %{{.*}}[] domain [t] : (!tidal.tensor<[2, 8], f32>, !tidal.tensor<[8, 2], f32>)
// CHECK: sdg.matmul %[[P]][t], %{{.*}}[] domain [t] : (!tidal.tensor<[2, 2], f32>, !tidal.tensor<[2, 64], f32>)
// CHECK: %[[Q:.*]] = sdg.matmul %{{.*}}[0:t + 1], %{{.*}}[] domain [t] : (!tidal.tensor<[8], f32>, !tidal.tensor<[8, 64], f32>)
// CHECK: sdg.matmul %[[Q]][t], %{{.*}}[] domain [t]
// CHECK: %[[U:.*]] = sdg.matmul %{{.*}}[t], %{{.*}}[] domain [t] : (!tidal.tensor<[8], f32>, !tidal.tensor<[8, 64], f32>)
// CHECK: sdg.matmul %[[U]][t], %{{.*}}[] domain [t] : (!tidal.tensor<[64], f32>, !tidal.tensor<[64, 2], f32>)
// CHECK: sdg.merge
// CHECK: %[[H:.*]] = sdg.matmul %{{.*}}[t], %{{.*}}[] domain [t] : (!tidal.tensor<[1, 8], f32>, !tidal.tensor<[8, 64], f32>)
// CHECK: sdg.matmul %[[H]][t], %{{.*}}[] domain [t] : (!tidal.tensor<[1, 64], f32>, !tidal.tensor<[64, 8], f32>)
sdg.graph @refused dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[2, 8], f32>
  %w = sdg.input "w" domain [] : !tidal.tensor<[8, 2], f32>
  %v = sdg.input "v" domain [] : !tidal.tensor<[2, 64], f32>
  %p = sdg.matmul %x[t], %w[] domain [t] : (!tidal.tensor<[2, 8], f32>, !tidal.tensor<[8, 2], f32>) -> !tidal.tensor<[2, 2], f32>
  %o = sdg.matmul %p[t], %v[] domain [t] : (!tidal.tensor<[2, 2], f32>, !tidal.tensor<[2, 64], f32>) -> !tidal.tensor<[2, 64], f32>
  %k = sdg.input "k" domain [t] : !tidal.tensor<[8], f32>
  %w2 = sdg.input "w2" domain [] : !tidal.tensor<[8, 64], f32>
  %v2 = sdg.input "v2" domain [] : !tidal.tensor<[64, 2], f32>
  %q = sdg.matmul %k[0:t + 1], %w2[] domain [t] : (!tidal.tensor<[8], f32>, !tidal.tensor<[8, 64], f32>) -> !tidal.tensor<[t + 1, 64], f32>
  %s = sdg.matmul %q[t], %v2[] domain [t] : (!tidal.tensor<[t + 1, 64], f32>, !tidal.tensor<[64, 2], f32>) -> !tidal.tensor<[t + 1, 2], f32>
  %u = sdg.matmul %k[t], %w2[] domain [t] : (!tidal.tensor<[8], f32>, !tidal.tensor<[8, 64], f32>) -> !tidal.tensor<[64], f32>
  %uv = sdg.matmul %u[t], %v2[] domain [t] : (!tidal.tensor<[64], f32>, !tidal.tensor<[64, 2], f32>) -> !tidal.tensor<[2], f32>
  %h0 = sdg.input "h0" domain [] : !tidal.tensor<[1, 8], f32>
  %w3 = sdg.input "w3" domain [] : !tidal.tensor<[64, 8], f32>
  %h = sdg.merge %h0[] if <t eq 0>, %n[t - 1] if <true> domain [t] : (!tidal.tensor<[1, 8], f32>, !tidal.tensor<[1, 8], f32>) -> !tidal.tensor<[1, 8], f32>
  %m = sdg.matmul %h[t], %w2[] domain [t] : (!tidal.tensor<[1, 8], f32>, !tidal.tensor<[8, 64], f32>) -> !tidal.tensor<[1, 64], f32>
  %n = sdg.matmul %m[t], %w3[] domain [t] : (!tidal.tensor<[1, 64], f32>, !tidal.tensor<[64, 8], f32>) -> !tidal.tensor<[1, 8], f32>
  sdg.output "o" %o[t] domain [t] : !tidal.tensor<[2, 64], f32>
  sdg.output "q" %q[t] domain [t] : !tidal.tensor<[t + 1, 64], f32>
  sdg.output "s" %s[t] domain [t] : !tidal.tensor<[t + 1, 2], f32>
  sdg.output "uv" %uv[t] domain [t] : !tidal.tensor<[2], f32>
  sdg.output "n" %h[t] domain [t] : !tidal.tensor<[1, 8], f32>
}
