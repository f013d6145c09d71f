// RUN: tidal-opt %s --split-input-file --sdg-simplify | FileCheck %s
// RUN: tidal-opt %s --split-input-file --pass-pipeline='builtin.module(sdg-simplify{rewrites=hoist})' | FileCheck %s --check-prefix=HOIST
// RUN: not tidal-opt %s --split-input-file --pass-pipeline='builtin.module(sdg-simplify{rewrites=inline})' 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: sdg-simplify: unknown rewrite 'inline' (expected some of branches, forward, hoist, fold)

// The module doc's example: x * 1 and a same-shape reshape are bypassed, the second
// branch of the merge can never hold (t < T everywhere) and the merge is bypassed
// too, and b * 2 does not use t: it runs once (domain []) and is read as %b2[].
// CHECK-LABEL: sdg.graph @doc
// CHECK: %[[X:.*]] = sdg.input "x" domain [t]
// CHECK: %[[B2:.*]] = sdg.binary mul %{{.*}}[], %{{.*}}[] domain [] :
// CHECK: %[[Z:.*]] = sdg.binary add %[[X]][t], %[[B2]][] domain [t]
// CHECK-NOT: sdg.merge
// CHECK-NOT: sdg.reshape
// CHECK: sdg.output "z" %[[Z]][t]
// Only hoisting: the rest stays.
// HOIST-LABEL: sdg.graph @doc
// HOIST: sdg.binary mul %{{.*}}[], %{{.*}}[] domain [] :
// HOIST: sdg.reshape
// HOIST: sdg.merge
sdg.graph @doc dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %b = sdg.input "b" domain [] : !tidal.tensor<[4], f32>
  %one = sdg.full 1.0 domain [] : !tidal.tensor<[], f32>
  %two = sdg.constant dense<2.0> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %b2 = sdg.binary mul %b[], %two[] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[4], f32>
  %y = sdg.binary mul %x[t], %one[] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[4], f32>
  %r = sdg.reshape %y[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %m = sdg.merge %r[t] if <t lt T>, %x[t] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %z = sdg.binary add %m[t], %b2[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "z" %z[t] domain [t] : !tidal.tensor<[4], f32>
}

// -----

// Dependences compose: y = x[t - 1] (an identity cast) read at y[1:t + 1] is
// x[0:t]; the squeeze of an unsqueeze read at [t] is its source at [t].
// CHECK-LABEL: sdg.graph @compose
// CHECK: %[[X:.*]] = sdg.input "x" domain [t]
// CHECK: sdg.reduce sum [0] %[[X]][0:t] domain [t]
// CHECK: sdg.output "q" %[[X]][t] domain [t]
sdg.graph @compose dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %y = sdg.cast %x[t - 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %s = sdg.reduce sum [0] %y[1:t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %u = sdg.unsqueeze 0 %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[1, 4], f32>
  %q = sdg.squeeze 0 %u[t] domain [t] : (!tidal.tensor<[1, 4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "s" %s[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "q" %q[t] domain [t] : !tidal.tensor<[4], f32>
}

// -----

// Branches: the second of three can never be the first true one (t eq 0 is
// covered by t lt 2); the first two cover the domain only when T <= 2, so the
// third stays and so does the merge.
// CHECK-LABEL: sdg.graph @branches
// CHECK: sdg.merge %{{.*}}[t] if <t lt 2>, %{{.*}}[t - 2] if <true> domain [t]
sdg.graph @branches dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %y = sdg.input "y" domain [t] : !tidal.tensor<[4], f32>
  %m = sdg.merge %x[t] if <t lt 2>, %y[t] if <t eq 0>, %m[t - 2] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "m" %m[t] domain [t] : !tidal.tensor<[4], f32>
}

// -----

// Folding: an expand of a splat is a splat of the expanded shape (a -inf mask too);
// 2 + 3 in f32 is 5. Refused: an i64 splat that sdg.full's f64 value cannot hold exactly.
// CHECK-LABEL: sdg.graph @fold
// CHECK-DAG: %[[FIVE:.*]] = sdg.full 5.000000e+00 domain [] : !tidal.tensor<[], f32>
// CHECK-DAG: %[[E:.*]] = sdg.full 2.000000e+00 domain [] : !tidal.tensor<[T, 4], f32>
// CHECK-DAG: %[[MASK:.*]] = sdg.full 0xFFF0000000000000 domain [] : !tidal.tensor<[4], f32>
// CHECK-DAG: %[[BIG:.*]] = sdg.expand %{{.*}}[] domain [] : (!tidal.tensor<[], i64>) -> !tidal.tensor<[4], i64>
// CHECK: sdg.output "five" %[[FIVE]][]
// CHECK: sdg.output "e" %[[E]][]
// CHECK: sdg.output "mask" %[[MASK]][]
// CHECK: sdg.output "bigs" %[[BIG]][]
sdg.graph @fold dims [t < T] {
  %two = sdg.constant dense<2.0> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %three = sdg.full 3.0 domain [] : !tidal.tensor<[], f32>
  %five = sdg.binary add %two[], %three[] domain [] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
  %e = sdg.expand %two[] domain [] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[T, 4], f32>
  %ninf = sdg.full 0xFFF0000000000000 domain [] : !tidal.tensor<[], f32>
  %mask = sdg.expand %ninf[] domain [] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[4], f32>
  %big = sdg.constant dense<9007199254740993> : tensor<i64> domain [] : !tidal.tensor<[], i64>
  %bigs = sdg.expand %big[] domain [] : (!tidal.tensor<[], i64>) -> !tidal.tensor<[4], i64>
  sdg.output "five" %five[] domain [] : !tidal.tensor<[], f32>
  sdg.output "e" %e[] domain [] : !tidal.tensor<[T, 4], f32>
  sdg.output "mask" %mask[] domain [] : !tidal.tensor<[4], f32>
  sdg.output "bigs" %bigs[] domain [] : !tidal.tensor<[4], i64>
}

// -----

// Refused. A random draw does not use t but differs at every t; an op read through a
// slice over t would lose that axis if hoisted; x + 0.0 is not x for x = -0.0; a
// reshape that changes the shape; a merge on a cycle; a UDF.
// CHECK-LABEL: sdg.graph @refused
// CHECK: sdg.random normal seed 3 domain [t]
// CHECK: %[[W:.*]] = sdg.unary exp %{{.*}}[] domain [t]
// CHECK: sdg.reduce sum [0] %[[W]][0:t + 1] domain [t]
// CHECK: sdg.binary add %{{.*}}[t], %{{.*}}[] domain [t]
// CHECK: sdg.reshape
// CHECK: sdg.merge %{{.*}}[t] if <true> domain [t]
// HOIST-LABEL: sdg.graph @refused
// HOIST: sdg.unary exp %{{.*}}[] domain [t]
sdg.graph @refused dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %b = sdg.input "b" domain [] : !tidal.tensor<[4], f32>
  %zero = sdg.full 0.0 domain [] : !tidal.tensor<[], f32>
  %n = sdg.random normal seed 3 domain [t] : !tidal.tensor<[4], f32>
  %w = sdg.unary exp %b[] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %s = sdg.reduce sum [0] %w[0:t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %a = sdg.binary add %x[t], %zero[] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[4], f32>
  %r = sdg.reshape %a[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[2, 2], f32>
  %m = sdg.merge %k[t] if <true> domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %k = sdg.binary add %m[t - 1], %x[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "n" %n[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "s" %s[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "r" %r[t] domain [t] : !tidal.tensor<[2, 2], f32>
  sdg.output "m" %m[t] domain [t] : !tidal.tensor<[4], f32>
}

// -----

// A condition isl cannot express (t * t) counts as reachable and covers nothing:
// the branch after it (t eq 0, covered in fact: 0 < T) is kept, and so is the merge.
// CHECK-LABEL: sdg.graph @nonaffine
// CHECK: sdg.merge %{{.*}}[t] if <t * t lt T>, %{{.*}}[t] if <t eq 0>, %{{.*}}[t] if <true> domain [t]
sdg.graph @nonaffine dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %y = sdg.input "y" domain [t] : !tidal.tensor<[4], f32>
  %m = sdg.merge %x[t] if <t * t lt T>, %y[t] if <t eq 0>, %x[t] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "m" %m[t] domain [t] : !tidal.tensor<[4], f32>
}

// -----

// Folding makes new ops (expand of a splat becomes sdg.full) while a round is under
// way; a merge rebuilt later in that round (its first branch can never hold) must
// find its operands' readers through the round's view, not through a stale handle of
// an op erased earlier whose memory the new op reuses (was: ValueError in
// _rebuild_merge). The dead branch goes, with what only it read.
// CHECK-LABEL: sdg.graph @fold_then_rebuild
// CHECK-NEXT: %[[Z:.*]] = sdg.full 0.000000e+00 domain [] : !tidal.tensor<[3], f32>
// CHECK-NEXT: %[[M:.*]] = sdg.merge %[[Z]][] if <true> domain [i, t]
// CHECK-NEXT: sdg.reduce sum [0, 1] %[[M]][0:I, 0:T] domain []
// CHECK-NOT: sdg.unsqueeze
sdg.graph @fold_then_rebuild dims [i < I, t < T] {
  %one = sdg.full 1.0 domain [] : !tidal.tensor<[], f32>
  %m1 = sdg.merge %e1[] if <true> domain [i, t] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  %u1 = sdg.unsqueeze 0 %one[] domain [] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[1], f32>
  %e1 = sdg.expand %u1[] domain [] : (!tidal.tensor<[1], f32>) -> !tidal.tensor<[3], f32>
  %zero = sdg.constant dense<0.0> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %ez = sdg.expand %zero[] domain [] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[3], f32>
  %m2 = sdg.merge %m1[i, t] if <i mod 2 eq 0 and i mod 2 ne 0>, %ez[] if <true> domain [i, t] : (!tidal.tensor<[3], f32>, !tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  %s = sdg.reduce sum [0, 1] %m2[0:I, 0:T] domain [] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  sdg.output "g" %s[] domain [] : !tidal.tensor<[3], f32>
}
