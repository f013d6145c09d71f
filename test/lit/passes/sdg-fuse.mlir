// sdg-fuse: producer-into-consumer fusion into sdg.island ops (one root per
// island, same domain, identity reads, static shapes), and what it refuses.
// RUN: tidal-opt %s --split-input-file --sdg-fuse | FileCheck %s
// Fusing twice changes nothing more, and inlining gives the ops back:
// RUN: tidal-opt %s --split-input-file --sdg-fuse --sdg-fuse | FileCheck %s
// RUN: tidal-opt %s --split-input-file --sdg-fuse --sdg-inline-islands | FileCheck %s --check-prefix=INLINE

!v = !tidal.tensor<[4], f32>
!m = !tidal.tensor<[4, 4], f32>

// A recurrent cell: matmul, add and tanh become one island inside the
// recurrence (its only same-point path runs through the island itself).
// CHECK-LABEL: sdg.graph @cell
// CHECK: %[[H:.*]] = sdg.merge %[[X:.*]][0] if <t eq 0>, %[[N:.*]][t - 1] if <true>
// CHECK-NEXT: %[[N]] = sdg.island %[[H]][t], %{{.*}}[], %[[X]][t] domain [t]
// CHECK-NEXT: ^bb0(%[[A0:.*]]: !tidal.tensor<[4], f32>{{.*}}, %[[A1:.*]]: !tidal.tensor<[4, 4], f32>{{.*}}, %[[A2:.*]]: !tidal.tensor<[4], f32>{{.*}}):
// CHECK-NEXT: %[[M:.*]] = sdg.matmul %[[A0]][t], %[[A1]][t] domain [t]
// CHECK-NEXT: %[[S:.*]] = sdg.binary add %[[M]][t], %[[A2]][t] domain [t]
// CHECK-NEXT: %[[R:.*]] = sdg.unary tanh %[[S]][t] domain [t]
// CHECK-NEXT: sdg.yield %[[R]]
// CHECK-NEXT: }
// CHECK-NEXT: sdg.output "h" %[[H]][t]
// INLINE-LABEL: sdg.graph @cell
// INLINE: sdg.merge %{{.*}}[0] if <t eq 0>, %[[N:.*]][t - 1] if <true>
// INLINE-NEXT: %[[M:.*]] = sdg.matmul %{{.*}}[t], %{{.*}}[] domain [t]
// INLINE-NEXT: %[[S:.*]] = sdg.binary add %[[M]][t], %{{.*}}[t] domain [t]
// INLINE-NEXT: %[[N]] = sdg.unary tanh %[[S]][t] domain [t]
// INLINE-NOT: sdg.island
sdg.graph @cell dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %w = sdg.param "W" dense<0.5> : tensor<4x4xf32> domain [] : !m
  %h = sdg.merge %x[0] if <t eq 0>, %n[t - 1] if <true> domain [t] : (!v, !v) -> !v
  %mm = sdg.matmul %h[t], %w[] domain [t] : (!v, !m) -> !v
  %a = sdg.binary add %mm[t], %x[t] domain [t] : (!v, !v) -> !v
  %n = sdg.unary tanh %a[t] domain [t] : (!v) -> !v
  sdg.output "h" %h[t] domain [t] : !v
}

// -----
!v = !tidal.tensor<[4], f32>
// An op read by two ops stays out of both (one root per island); its two
// readers each fuse what only they read.
// CHECK-LABEL: sdg.graph @shared
// CHECK: %[[E:.*]] = sdg.unary exp %{{.*}}[t] domain [t]
// CHECK-NEXT: sdg.island %[[E]][t] domain [t]
// CHECK: sdg.unary neg
// CHECK-NEXT: sdg.unary abs
// CHECK: sdg.island %[[E]][t] domain [t]
// CHECK: sdg.unary sin
// CHECK-NEXT: sdg.unary cos
sdg.graph @shared dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %e = sdg.unary exp %x[t] domain [t] : (!v) -> !v
  %a = sdg.unary neg %e[t] domain [t] : (!v) -> !v
  %b = sdg.unary abs %a[t] domain [t] : (!v) -> !v
  %c = sdg.unary sin %e[t] domain [t] : (!v) -> !v
  %d = sdg.unary cos %c[t] domain [t] : (!v) -> !v
  sdg.output "b" %b[t] domain [t] : !v
  sdg.output "d" %d[t] domain [t] : !v
}

// -----
!v = !tidal.tensor<[4], f32>
// Refused: a read at another point (t - 1), a slice read (a window), a
// shape that varies with the point, another domain, and merges, inputs
// and outputs themselves. Nothing here fuses.
// CHECK-LABEL: sdg.graph @refused
// CHECK-NOT: sdg.island
sdg.graph @refused dims [b < B, t < T] {
  %x = sdg.input "x" domain [t] : !v
  %e = sdg.unary exp %x[t] domain [t] : (!v) -> !v
  %late = sdg.unary neg %e[t - 1] domain [t] : (!v) -> !v
  %s = sdg.unary sin %x[t] domain [t] : (!v) -> !v
  %win = sdg.reduce sum [0] %s[0:t + 1] domain [t] : (!v) -> !v
  %g = sdg.unary cos %x[t] domain [t] : (!v) -> !v
  %grow = sdg.expand %g[t] domain [t] : (!v) -> !tidal.tensor<[t + 1, 4], f32>
  %z = sdg.unary tanh %x[t] domain [t] : (!v) -> !v
  %other = sdg.unary abs %z[t] domain [b, t] : (!v) -> !v
  sdg.output "late" %late[t] domain [t] : !v
  sdg.output "win" %win[t] domain [t] : !v
  sdg.output "grow" %grow[t] domain [t] : !tidal.tensor<[t + 1, 4], f32>
  sdg.output "other" %other[b, t] domain [b, t] : !v
}

// -----
!v = !tidal.tensor<[4], f32>
// 64-bit values fuse like any other (the jax runtime runs kernels with x64 on).
// CHECK-LABEL: sdg.graph @wide
// CHECK: %[[W:.*]] = sdg.island %{{.*}}[t] domain [t]
// CHECK: sdg.cast
// CHECK: sdg.binary mul
// CHECK: sdg.output "wide" %[[W]][t]
sdg.graph @wide dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %i = sdg.cast %x[t] domain [t] : (!v) -> !tidal.tensor<[4], i64>
  %wide = sdg.binary mul %i[t], %i[t] domain [t] : (!tidal.tensor<[4], i64>, !tidal.tensor<[4], i64>) -> !tidal.tensor<[4], i64>
  sdg.output "wide" %wide[t] domain [t] : !tidal.tensor<[4], i64>
}

// -----
!v = !tidal.tensor<[4], f32>
// Inside a recurrence: %a and %b are read by two ops each (%b by an
// output), so they stay out; %c and %d fuse. The island's only same-point
// reads are of ops outside it, so no cycle appears.
// CHECK-LABEL: sdg.graph @recurrence_with_shared_values
// CHECK: %[[A:.*]] = sdg.unary exp %[[H:.*]][t] domain [t]
// CHECK-NEXT: %[[B:.*]] = sdg.unary neg %[[A]][t] domain [t]
// CHECK-NEXT: %[[D:.*]] = sdg.island %[[A]][t], %[[B]][t] domain [t]
// CHECK: sdg.binary add
// CHECK-NEXT: sdg.unary tanh
sdg.graph @recurrence_with_shared_values dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %h = sdg.merge %x[0] if <t eq 0>, %d[t - 1] if <true> domain [t] : (!v, !v) -> !v
  %a = sdg.unary exp %h[t] domain [t] : (!v) -> !v
  %b = sdg.unary neg %a[t] domain [t] : (!v) -> !v
  %c = sdg.binary add %a[t], %b[t] domain [t] : (!v, !v) -> !v
  %d = sdg.unary tanh %c[t] domain [t] : (!v) -> !v
  sdg.output "h" %h[t] domain [t] : !v
  sdg.output "b" %b[t] domain [t] : !v
}

// -----
!v = !tidal.tensor<[4], f32>
// A recurrence that reads ahead (t + 1, a backward return) fuses too: its
// island reads the merge at t + 1 from outside. The reduction, read by the
// merge and by the island, is the root of its own island.
// CHECK-LABEL: sdg.graph @reads_ahead
// CHECK: %[[RET:.*]] = sdg.merge %[[R:.*]][t] if <t eq T - 1>, %[[S:.*]][t] if <true>
// CHECK-NEXT: %[[S]] = sdg.island %{{.*}}[], %[[RET]][t + 1], %[[R]][t] domain [t]
// CHECK: sdg.binary mul
// CHECK-NEXT: sdg.binary add
// CHECK: %[[R]] = sdg.island %{{.*}}[t] domain [t]
// CHECK: sdg.unary exp
// CHECK-NEXT: sdg.reduce sum
sdg.graph @reads_ahead dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %k = sdg.constant dense<0.9> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %ret = sdg.merge %r[t] if <t eq T - 1>, %s[t] if <true> domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
  %m = sdg.binary mul %k[], %ret[t + 1] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
  %s = sdg.binary add %r[t], %m[t] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
  %ex = sdg.unary exp %x[t] domain [t] : (!v) -> !v
  %r = sdg.reduce sum [0] %ex[t] domain [t] : (!v) -> !tidal.tensor<[], f32>
  sdg.output "ret" %ret[t] domain [t] : !tidal.tensor<[], f32>
}

// -----
!v = !tidal.tensor<[4], f32>
!p = !tidal.tensor<[t + 1], f32>
// A chain over a growing prefix (one extent, t + 1, in every varying value):
// the keys' permute, scores, softmax and the weighted sum become one island,
// which reads the keys through the slice k[0:t + 1] (its block argument has
// the sliced type: a leading axis of t + 1).
// CHECK-LABEL: sdg.graph @prefix_chain
// CHECK: %[[O:.*]] = sdg.island %[[K:.*]][0:t + 1], %{{.*}}[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
// CHECK-NEXT: ^bb0(%[[A:.*]]: !tidal.tensor<[t + 1, 4], f32>, %{{.*}}: !tidal.tensor<[4], f32>):
// CHECK-NEXT: sdg.permute [1, 0] %[[A]][t] domain [t]
// CHECK-NEXT: sdg.matmul
// CHECK-NEXT: sdg.reduce max
// CHECK-NEXT: sdg.binary sub
// CHECK-NEXT: sdg.unary exp
// CHECK-NEXT: sdg.reduce sum
// CHECK-NEXT: sdg.binary div
// CHECK-NEXT: sdg.matmul
// CHECK: sdg.output "o" %[[O]][t]
sdg.graph @prefix_chain dims [t < T] {
  %q = sdg.input "q" domain [t] : !v
  %k = sdg.input "k" domain [t] : !v
  %kt = sdg.permute [1, 0] %k[0:t + 1] domain [t] : (!v) -> !tidal.tensor<[4, t + 1], f32>
  %s = sdg.matmul %q[t], %kt[t] domain [t] : (!v, !tidal.tensor<[4, t + 1], f32>) -> !p
  %m = sdg.reduce max [0] keepdim %s[t] domain [t] : (!p) -> !tidal.tensor<[1], f32>
  %d = sdg.binary sub %s[t], %m[t] domain [t] : (!p, !tidal.tensor<[1], f32>) -> !p
  %e = sdg.unary exp %d[t] domain [t] : (!p) -> !p
  %z = sdg.reduce sum [0] keepdim %e[t] domain [t] : (!p) -> !tidal.tensor<[1], f32>
  %a = sdg.binary div %e[t], %z[t] domain [t] : (!p, !tidal.tensor<[1], f32>) -> !p
  %o = sdg.matmul %kt[t], %a[t] domain [t] : (!tidal.tensor<[4, t + 1], f32>, !p) -> !v
  sdg.output "o" %o[t] domain [t] : !v
}

// -----
!p = !tidal.tensor<[t + 1], f32>
// Refused: values of two different varying extents (t + 1, t + 2) in one
// island (the t + 2 chain joins the add, the t + 1 one is an island of its
// own), and a varying op a backend cannot pad (a reshape: the neg it reads
// stays out too).
// CHECK-LABEL: sdg.graph @two_extents
// CHECK: %[[SA:.*]] = sdg.island %{{.*}}[t] domain [t] : (!tidal.tensor<[t + 1], f32>) -> !tidal.tensor<[], f32>
// CHECK: sdg.yield
// CHECK: %[[C:.*]] = sdg.island %{{.*}}[t], %[[SA]][t] domain [t] : (!tidal.tensor<[t + 2], f32>, !tidal.tensor<[], f32>)
// CHECK: sdg.yield
// CHECK: %{{.*}} = sdg.unary neg
// CHECK-NEXT: %{{.*}} = sdg.reshape
sdg.graph @two_extents dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[], f32>
  %a = sdg.expand %x[t] domain [t] : (!tidal.tensor<[], f32>) -> !p
  %b = sdg.expand %x[t] domain [t] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[t + 2], f32>
  %ea = sdg.unary exp %a[t] domain [t] : (!p) -> !p
  %sa = sdg.reduce sum [0] %ea[t] domain [t] : (!p) -> !tidal.tensor<[], f32>
  %eb = sdg.unary exp %b[t] domain [t] : (!tidal.tensor<[t + 2], f32>) -> !tidal.tensor<[t + 2], f32>
  %sb = sdg.reduce sum [0] %eb[t] domain [t] : (!tidal.tensor<[t + 2], f32>) -> !tidal.tensor<[], f32>
  %c = sdg.binary add %sa[t], %sb[t] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
  %n = sdg.unary neg %a[t] domain [t] : (!p) -> !p
  %r = sdg.reshape %n[t] domain [t] : (!p) -> !tidal.tensor<[1, t + 1], f32>
  sdg.output "c" %c[t] domain [t] : !tidal.tensor<[], f32>
  sdg.output "r" %r[t] domain [t] : !tidal.tensor<[1, t + 1], f32>
}

// -----
!v = !tidal.tensor<[4], f32>
// Refused: a strided slice read (the island reads points or unit-step
// slices), a slice of a value whose own shape varies with the point, and a
// slice of fixed length (only point-varying slice reads fuse).
// CHECK-LABEL: sdg.graph @strided_and_varying_slices
// CHECK-NOT: sdg.island
sdg.graph @strided_and_varying_slices dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %s = sdg.reduce sum [0] %x[0:t + 1:2] domain [t] : (!v) -> !v
  %n = sdg.unary neg %s[t] domain [t] : (!v) -> !v
  sdg.output "n" %n[t] domain [t] : !v
  %g = sdg.expand %x[t] domain [t] : (!v) -> !tidal.tensor<[t + 1, 4], f32>
  %w = sdg.reduce sum [0] %g[0:t + 1] domain [t] : (!tidal.tensor<[t + 1, 4], f32>) -> !tidal.tensor<[t + 1, 4], f32>
  %e = sdg.unary exp %w[t] domain [t] : (!tidal.tensor<[t + 1, 4], f32>) -> !tidal.tensor<[t + 1, 4], f32>
  sdg.output "e" %e[t] domain [t] : !tidal.tensor<[t + 1, 4], f32>
  %f = sdg.reduce sum [0] %x[t:t + 2] domain [t] : (!v) -> !v
  %h = sdg.unary exp %f[t] domain [t] : (!v) -> !v
  sdg.output "h" %h[t] domain [t] : !v
}
