// RUN: tidal-opt %s --split-input-file --pass-pipeline='builtin.module(sdg-tile{tile=64 min-bytes=0})' | FileCheck %s
// RUN: tidal-opt %s --split-input-file --sdg-tile | FileCheck %s --check-prefix=DEFAULT
// RUN: not tidal-opt %s --split-input-file --pass-pipeline='builtin.module(sdg-tile{tile=-1})' 2>&1 | FileCheck %s --check-prefix=BAD

// The sum over an episode of a vectorized chain (x[0:T] * w, exp): the read
// x[0:T] that makes the axis becomes the n-th tile, the rows
// min(64 n + j, T - 1) of x (static 64 rows; the last tile repeats row T - 1);
// the chain runs per tile; the rows past T are masked with 0 before each
// tile's sum; a final sum adds the N partial sums. N is derived: runs give T
// only. (x is as large as the chain's values: its tiles are read from its
// store, not from a padded copy of it, which would cost what tiling saves.)
// The default threshold (1 MiB at one point, T at 1024: this chain's values
// have 12 KiB, they fit in the cache whole) leaves this graph alone.
// CHECK-LABEL: sdg.graph @episode dims [t < T, n < N = (T + 63) floordiv 64]
// CHECK: %[[X:.*]] = sdg.input "x"
// CHECK: %[[W:.*]] = sdg.param "w"
// CHECK: %[[J:.*]] = sdg.iota 0 domain [n] : !tidal.tensor<[64], i64>
// CHECK: %[[A:.*]] = sdg.symbol_value <64 * n> domain [n]
// CHECK: %[[L:.*]] = sdg.symbol_value <T - 1> domain [n]
// CHECK: %[[B:.*]] = sdg.binary add %[[J]][n], %[[A]][n] domain [n]
// CHECK: %[[C:.*]] = sdg.binary min %[[B]][n], %[[L]][n] domain [n]
// CHECK: %[[P:.*]] = sdg.index_select 0 %[[X]][0:T], %[[C]][n] domain [n] : (!tidal.tensor<[3], f32>, !tidal.tensor<[64], i64>) -> !tidal.tensor<[64, 3], f32>
// CHECK: %[[M:.*]] = sdg.binary mul %[[P]][n], %[[W]][] domain [n] : (!tidal.tensor<[64, 3], f32>, !tidal.tensor<[3], f32>) -> !tidal.tensor<[64, 3], f32>
// CHECK: %[[E:.*]] = sdg.unary exp %[[M]][n] domain [n] : (!tidal.tensor<[64, 3], f32>) -> !tidal.tensor<[64, 3], f32>
// CHECK: %[[I:.*]] = sdg.iota 0 domain [n] : !tidal.tensor<[64, 3], i64>
// CHECK: %[[R:.*]] = sdg.symbol_value <T - 64 * n> domain [n]
// CHECK: %[[V:.*]] = sdg.binary lt %[[I]][n], %[[R]][n] domain [n]
// CHECK: %[[Z:.*]] = sdg.full 0.000000e+00 domain []
// CHECK: %[[K:.*]] = sdg.where %[[V]][n], %[[E]][n], %[[Z]][] domain [n]
// CHECK: %[[Q:.*]] = sdg.reduce sum [0] %[[K]][n] domain [n] : (!tidal.tensor<[64, 3], f32>) -> !tidal.tensor<[3], f32>
// CHECK: %[[S:.*]] = sdg.reduce sum [0] %[[Q]][0:N] domain [] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
// CHECK: sdg.output "y" %[[S]][]
// DEFAULT-LABEL: sdg.graph @episode dims [t < T] {
// DEFAULT: sdg.reduce sum [0] %{{.*}}[] domain [] : (!tidal.tensor<[T, 3], f32>)
sdg.graph @episode dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[3], f32>
  %w = sdg.param "w" dense<[1.0, 2.0, 0.5]> : tensor<3xf32> domain [] : !tidal.tensor<[3], f32>
  %m = sdg.binary mul %x[0:T], %w[] domain [] : (!tidal.tensor<[3], f32>, !tidal.tensor<[3], f32>) -> !tidal.tensor<[T, 3], f32>
  %e = sdg.unary exp %m[] domain [] : (!tidal.tensor<[T, 3], f32>) -> !tidal.tensor<[T, 3], f32>
  %s = sdg.reduce sum [0] %e[] domain [] : (!tidal.tensor<[T, 3], f32>) -> !tidal.tensor<[3], f32>
  sdg.output "y" %s[] domain [] : !tidal.tensor<[3], f32>
}

// -----

// The default cost model: this chain's values have 1 MiB at T = 1024 (256
// floats a step), more than fits in the cache whole, so the default tiles it,
// with as many rows as make a tile of its largest value 256 KiB: 256 steps.
// CHECK-LABEL: sdg.graph @cache dims [t < T, n < N = (T + 63) floordiv 64]
// DEFAULT-LABEL: sdg.graph @cache dims [t < T, n < N = (T + 255) floordiv 256]
// DEFAULT: sdg.index_select 0 %{{.*}}[0:T], %{{.*}}[n] domain [n] : (!tidal.tensor<[256], f32>, !tidal.tensor<[256], i64>) -> !tidal.tensor<[256, 256], f32>
// DEFAULT: sdg.unary tanh %{{.*}}[n] domain [n] : (!tidal.tensor<[256, 256], f32>) -> !tidal.tensor<[256, 256], f32>
// DEFAULT: sdg.reduce sum [0] %{{.*}}[0:N] domain []
sdg.graph @cache dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[256], f32>
  %h = sdg.unary tanh %x[0:T] domain [] : (!tidal.tensor<[256], f32>) -> !tidal.tensor<[T, 256], f32>
  %s = sdg.reduce sum [0] %h[] domain [] : (!tidal.tensor<[T, 256], f32>) -> !tidal.tensor<[256], f32>
  sdg.output "y" %s[] domain [] : !tidal.tensor<[256], f32>
}

// -----

// An input a quarter or less the size of the chain's largest value (x: 2
// floats a step, the matmul's result 64): tiles of a size the tile may not
// divide are read from one padded copy of the whole input, N tiles long, as
// slices of a static 64 rows, so a loop compiled with static shapes runs them
// (a read of the last tile's min(T - 64 n, 64) rows could not). The mask
// before the partial sum stays: tanh of the padding's zero rows is no identity
// of every chain.
// CHECK-LABEL: sdg.graph @padded dims [t < T, n < N = (T + 63) floordiv 64]
// CHECK: %[[X:.*]] = sdg.input "x"
// CHECK: %[[P:.*]] = sdg.pad 0 <0> <-((T + 63) mod 64) + 63> value 0.000000e+00 %[[X]][0:T] domain [] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[64 * ((T + 63) floordiv 64), 2], f32>
// CHECK: %[[S:.*]] = sdg.slice 0 at <64 * n> %[[P]][] domain [n] : (!tidal.tensor<[64 * ((T + 63) floordiv 64), 2], f32>) -> !tidal.tensor<[64, 2], f32>
// CHECK: %[[M:.*]] = sdg.matmul %[[S]][n], %{{.*}}[] domain [n] : (!tidal.tensor<[64, 2], f32>, !tidal.tensor<[2, 64], f32>) -> !tidal.tensor<[64, 64], f32>
// CHECK: sdg.where
// CHECK: sdg.reduce sum [0] %{{.*}}[n] domain [n]
sdg.graph @padded dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[2], f32>
  %w = sdg.param "w" dense<0.5> : tensor<2x64xf32> domain [] : !tidal.tensor<[2, 64], f32>
  %m = sdg.matmul %x[0:T], %w[] domain [] : (!tidal.tensor<[2], f32>, !tidal.tensor<[2, 64], f32>) -> !tidal.tensor<[T, 64], f32>
  %h = sdg.unary tanh %m[] domain [] : (!tidal.tensor<[T, 64], f32>) -> !tidal.tensor<[T, 64], f32>
  %s = sdg.reduce sum [0] %h[] domain [] : (!tidal.tensor<[T, 64], f32>) -> !tidal.tensor<[64], f32>
  sdg.output "y" %s[] domain [] : !tidal.tensor<[64], f32>
}

// -----

// A static batch of 256 rows, per i: tiles of 64 divide it, so each tile is an
// sdg.slice of the value computed outside the chain (the input), with no
// padding and no mask; N = 4 is a constant. The batched matmul and the
// reduction over the other axes are row-wise and join the chain.
// CHECK-LABEL: sdg.graph @batch dims [i < I, n < N = 4]
// CHECK: %[[X:.*]] = sdg.input "x" domain [i]
// CHECK: %[[T:.*]] = sdg.slice 0 at <64 * n> %[[X]][i] domain [i, n] : (!tidal.tensor<[256, 2, 8], f32>) -> !tidal.tensor<[64, 2, 8], f32>
// CHECK: %[[M:.*]] = sdg.matmul %[[T]][i, n], %{{.*}}[] domain [i, n] : (!tidal.tensor<[64, 2, 8], f32>, !tidal.tensor<[8, 4], f32>) -> !tidal.tensor<[64, 2, 4], f32>
// CHECK: %[[H:.*]] = sdg.unary tanh %[[M]][i, n] domain [i, n]
// CHECK: %[[R:.*]] = sdg.reduce sum [1, 2] %[[H]][i, n] domain [i, n] : (!tidal.tensor<[64, 2, 4], f32>) -> !tidal.tensor<[64], f32>
// CHECK-NOT: sdg.pad
// CHECK-NOT: sdg.where
// CHECK: %[[Q:.*]] = sdg.reduce sum [0] %[[R]][i, n] domain [i, n] : (!tidal.tensor<[64], f32>) -> !tidal.tensor<[], f32>
// CHECK: %[[S:.*]] = sdg.reduce sum [0] %[[Q]][i, 0:N] domain [i]
// CHECK: sdg.output "y" %[[S]][i]
sdg.graph @batch dims [i < I] {
  %x = sdg.input "x" domain [i] : !tidal.tensor<[256, 2, 8], f32>
  %w = sdg.param "w" dense<0.5> : tensor<8x4xf32> domain [] : !tidal.tensor<[8, 4], f32>
  %m = sdg.matmul %x[i], %w[] domain [i] : (!tidal.tensor<[256, 2, 8], f32>, !tidal.tensor<[8, 4], f32>) -> !tidal.tensor<[256, 2, 4], f32>
  %h = sdg.unary tanh %m[i] domain [i] : (!tidal.tensor<[256, 2, 4], f32>) -> !tidal.tensor<[256, 2, 4], f32>
  %r = sdg.reduce sum [1, 2] %h[i] domain [i] : (!tidal.tensor<[256, 2, 4], f32>) -> !tidal.tensor<[256], f32>
  %s = sdg.reduce sum [0] %r[i] domain [i] : (!tidal.tensor<[256], f32>) -> !tidal.tensor<[], f32>
  sdg.output "y" %s[i] domain [i] : !tidal.tensor<[], f32>
}

// -----

// A max with keepdim over 100 rows (not a multiple of 64): the last tile
// reads rows 64..99 and repeats row 99, masked with -inf; each partial keeps
// the dim, so the final max over the partials does not.
// CHECK-LABEL: sdg.graph @maximum dims [n < N = 2]
// CHECK: sdg.symbol_value <99> domain [n]
// CHECK: %[[C:.*]] = sdg.binary min
// CHECK: %[[P:.*]] = sdg.index_select 0 %{{.*}}[], %[[C]][n] domain [n] : (!tidal.tensor<[100, 4], f32>, !tidal.tensor<[64], i64>) -> !tidal.tensor<[64, 4], f32>
// CHECK: %[[E:.*]] = sdg.unary exp %[[P]][n] domain [n]
// CHECK: sdg.symbol_value <-64 * n + 100> domain [n]
// CHECK: %[[F:.*]] = sdg.full 0xFFF0000000000000 domain [] : !tidal.tensor<[], f32>
// CHECK: %[[K:.*]] = sdg.where %{{.*}}[n], %[[E]][n], %[[F]][] domain [n]
// CHECK: %[[Q:.*]] = sdg.reduce max [0] keepdim %[[K]][n] domain [n] : (!tidal.tensor<[64, 4], f32>) -> !tidal.tensor<[1, 4], f32>
// CHECK: sdg.reduce max [0] %[[Q]][0:N] domain [] : (!tidal.tensor<[1, 4], f32>) -> !tidal.tensor<[1, 4], f32>
sdg.graph @maximum dims [] {
  %x = sdg.input "x" domain [] : !tidal.tensor<[100, 4], f32>
  %e = sdg.unary exp %x[] domain [] : (!tidal.tensor<[100, 4], f32>) -> !tidal.tensor<[100, 4], f32>
  %m = sdg.reduce max [0] keepdim %e[] domain [] : (!tidal.tensor<[100, 4], f32>) -> !tidal.tensor<[1, 4], f32>
  sdg.output "m" %m[] domain [] : !tidal.tensor<[1, 4], f32>
}

// -----

// Two reductions over the rows of one chain (a sum and a max of exp(x)) are
// tiled together: one tile dim, the chain computed once per tile, each
// reduction masked with its own identity.
// CHECK-LABEL: sdg.graph @shared dims [n < N = 2]
// CHECK: %[[P:.*]] = sdg.index_select 0 %{{.*}}[], %{{.*}}[n] domain [n]
// CHECK: %[[E:.*]] = sdg.unary exp %[[P]][n] domain [n]
// CHECK-NOT: sdg.unary exp
// CHECK: sdg.full 0.000000e+00
// CHECK: %[[A:.*]] = sdg.where %{{.*}}[n], %[[E]][n], %{{.*}}[] domain [n]
// CHECK: %[[QA:.*]] = sdg.reduce sum [0] %[[A]][n] domain [n]
// CHECK: %[[S:.*]] = sdg.reduce sum [0] %[[QA]][0:N] domain []
// CHECK: sdg.full 0xFFF0000000000000
// CHECK: %[[B:.*]] = sdg.where %{{.*}}[n], %[[E]][n], %{{.*}}[] domain [n]
// CHECK: %[[QB:.*]] = sdg.reduce max [0] %[[B]][n] domain [n]
// CHECK: %[[M:.*]] = sdg.reduce max [0] %[[QB]][0:N] domain []
// CHECK: sdg.output "s" %[[S]][]
// CHECK: sdg.output "m" %[[M]][]
sdg.graph @shared dims [] {
  %x = sdg.input "x" domain [] : !tidal.tensor<[100, 4], f32>
  %e = sdg.unary exp %x[] domain [] : (!tidal.tensor<[100, 4], f32>) -> !tidal.tensor<[100, 4], f32>
  %s = sdg.reduce sum [0] %e[] domain [] : (!tidal.tensor<[100, 4], f32>) -> !tidal.tensor<[4], f32>
  %m = sdg.reduce max [0] %e[] domain [] : (!tidal.tensor<[100, 4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "s" %s[] domain [] : !tidal.tensor<[4], f32>
  sdg.output "m" %m[] domain [] : !tidal.tensor<[4], f32>
}

// -----

// A weight gradient over 100 steps (sum over the steps of h[t]^T @ g[t], h a
// tanh): the last tile is masked through the product's factors, h beneath its
// batched transpose and g, not through the product: the padded steps multiply
// 0 by 0 whatever their rows hold, and sdg-contract can then fold the sum into
// one contraction over the tile's steps and rows. The max over the same
// products keeps the product's mask (a factor's 0 is not max's identity).
// CHECK-LABEL: sdg.graph @factors dims [n < N = 2]
// CHECK: %[[H:.*]] = sdg.unary tanh %{{.*}}[n] domain [n] {{.*}} -> !tidal.tensor<[64, 8, 16], f32>
// CHECK: %[[G:.*]] = sdg.slice 0 at <64 * n> %{{.*}}[] domain [n] : (!tidal.tensor<[128, 8, 4], f32>) -> !tidal.tensor<[64, 8, 4], f32>
// CHECK: %[[HM:.*]] = sdg.where %{{.*}}[n], %[[H]][n], %{{.*}}[] domain [n] : ({{.*}}) -> !tidal.tensor<[64, 8, 16], f32>
// CHECK: %[[HT:.*]] = sdg.permute [0, 2, 1] %[[HM]][n] domain [n]
// CHECK: %[[GM:.*]] = sdg.where %{{.*}}[n], %[[G]][n], %{{.*}}[] domain [n] : ({{.*}}) -> !tidal.tensor<[64, 8, 4], f32>
// CHECK: %[[P:.*]] = sdg.matmul %[[HT]][n], %[[GM]][n] domain [n]
// CHECK: %[[Q:.*]] = sdg.reduce sum [0] %[[P]][n] domain [n] : (!tidal.tensor<[64, 16, 4], f32>) -> !tidal.tensor<[16, 4], f32>
// CHECK: sdg.reduce sum [0] %[[Q]][0:N] domain [] : (!tidal.tensor<[16, 4], f32>) -> !tidal.tensor<[16, 4], f32>
// CHECK: %[[P2:.*]] = sdg.matmul %{{.*}}[n], %{{.*}}[n] domain [n]
// CHECK: %[[M2:.*]] = sdg.where %{{.*}}[n], %[[P2]][n], %{{.*}}[] domain [n] : ({{.*}}) -> !tidal.tensor<[64, 16, 4], f32>
// CHECK: sdg.reduce max [0] %[[M2]][n] domain [n]
sdg.graph @factors dims [] {
  %x = sdg.input "x" domain [] : !tidal.tensor<[100, 8, 16], f32>
  %g = sdg.input "g" domain [] : !tidal.tensor<[100, 8, 4], f32>
  %h = sdg.unary tanh %x[] domain [] : (!tidal.tensor<[100, 8, 16], f32>) -> !tidal.tensor<[100, 8, 16], f32>
  %ht = sdg.permute [0, 2, 1] %h[] domain [] : (!tidal.tensor<[100, 8, 16], f32>) -> !tidal.tensor<[100, 16, 8], f32>
  %p = sdg.matmul %ht[], %g[] domain [] : (!tidal.tensor<[100, 16, 8], f32>, !tidal.tensor<[100, 8, 4], f32>) -> !tidal.tensor<[100, 16, 4], f32>
  %dw = sdg.reduce sum [0] %p[] domain [] : (!tidal.tensor<[100, 16, 4], f32>) -> !tidal.tensor<[16, 4], f32>
  %p2 = sdg.matmul %ht[], %g[] domain [] : (!tidal.tensor<[100, 16, 8], f32>, !tidal.tensor<[100, 8, 4], f32>) -> !tidal.tensor<[100, 16, 4], f32>
  %mx = sdg.reduce max [0] %p2[] domain [] : (!tidal.tensor<[100, 16, 4], f32>) -> !tidal.tensor<[16, 4], f32>
  sdg.output "dw" %dw[] domain [] : !tidal.tensor<[16, 4], f32>
  sdg.output "mx" %mx[] domain [] : !tidal.tensor<[16, 4], f32>
}

// -----

// A batched product whose left factor is no batched transpose (h[t] @ g[t]):
// sdg-contract cannot fold its sum into one contraction (that would need a copy
// of h), so the last tile is masked through the (64, 16, 4) products, not
// through both (64, 16, 8) and (64, 8, 4) factors.
// CHECK-LABEL: sdg.graph @unfolded dims [n < N = 2]
// CHECK: %[[H:.*]] = sdg.unary tanh %{{.*}}[n] domain [n]
// CHECK: %[[G:.*]] = sdg.slice 0 at <64 * n> %{{.*}}[] domain [n]
// CHECK-NOT: sdg.where
// CHECK: %[[P:.*]] = sdg.matmul %[[H]][n], %[[G]][n] domain [n]
// CHECK: %[[M:.*]] = sdg.where %{{.*}}[n], %[[P]][n], %{{.*}}[] domain [n] : ({{.*}}) -> !tidal.tensor<[64, 16, 4], f32>
// CHECK: %[[Q:.*]] = sdg.reduce sum [0] %[[M]][n] domain [n]
// CHECK: sdg.reduce sum [0] %[[Q]][0:N] domain []
sdg.graph @unfolded dims [] {
  %x = sdg.input "x" domain [] : !tidal.tensor<[100, 16, 8], f32>
  %g = sdg.input "g" domain [] : !tidal.tensor<[100, 8, 4], f32>
  %h = sdg.unary tanh %x[] domain [] : (!tidal.tensor<[100, 16, 8], f32>) -> !tidal.tensor<[100, 16, 8], f32>
  %p = sdg.matmul %h[], %g[] domain [] : (!tidal.tensor<[100, 16, 8], f32>, !tidal.tensor<[100, 8, 4], f32>) -> !tidal.tensor<[100, 16, 4], f32>
  %dw = sdg.reduce sum [0] %p[] domain [] : (!tidal.tensor<[100, 16, 4], f32>) -> !tidal.tensor<[16, 4], f32>
  sdg.output "dw" %dw[] domain [] : !tidal.tensor<[16, 4], f32>
}

// -----

// Reductions over the rows and other axes (a bias's gradient sums its steps
// and batch rows): each reduces the other axes of the tile first, with keepdim,
// and masks the (64, 1, 16) partials, not the (64, 8, 16) values; the max with
// its identity -inf, its own dims ([1, 0], keepdim) kept for the partial.
// CHECK-LABEL: sdg.graph @rows dims [n < N = 2]
// CHECK: %[[H:.*]] = sdg.unary tanh %{{.*}}[n] domain [n]
// CHECK: %[[S1:.*]] = sdg.reduce sum [1] keepdim %[[H]][n] domain [n] : (!tidal.tensor<[64, 8, 16], f32>) -> !tidal.tensor<[64, 1, 16], f32>
// CHECK: %[[W1:.*]] = sdg.where %{{.*}}[n], %[[S1]][n], %{{.*}}[] domain [n] : ({{.*}}) -> !tidal.tensor<[64, 1, 16], f32>
// CHECK: %[[Q1:.*]] = sdg.reduce sum [0, 1] %[[W1]][n] domain [n] : (!tidal.tensor<[64, 1, 16], f32>) -> !tidal.tensor<[16], f32>
// CHECK: %[[R1:.*]] = sdg.reduce sum [0] %[[Q1]][0:N] domain []
// CHECK: %[[S2:.*]] = sdg.reduce max [1] keepdim %[[H]][n] domain [n] : (!tidal.tensor<[64, 8, 16], f32>) -> !tidal.tensor<[64, 1, 16], f32>
// CHECK: sdg.full 0xFFF0000000000000
// CHECK: %[[W2:.*]] = sdg.where %{{.*}}[n], %[[S2]][n], %{{.*}}[] domain [n]
// CHECK: %[[Q2:.*]] = sdg.reduce max [1, 0] keepdim %[[W2]][n] domain [n] : (!tidal.tensor<[64, 1, 16], f32>) -> !tidal.tensor<[1, 1, 16], f32>
// CHECK: %[[R2:.*]] = sdg.reduce max [0] %[[Q2]][0:N] domain []
// CHECK: sdg.output "s" %[[R1]][]
// CHECK: sdg.output "m" %[[R2]][]
sdg.graph @rows dims [] {
  %x = sdg.input "x" domain [] : !tidal.tensor<[100, 8, 16], f32>
  %h = sdg.unary tanh %x[] domain [] : (!tidal.tensor<[100, 8, 16], f32>) -> !tidal.tensor<[100, 8, 16], f32>
  %s = sdg.reduce sum [0, 1] %h[] domain [] : (!tidal.tensor<[100, 8, 16], f32>) -> !tidal.tensor<[16], f32>
  %m = sdg.reduce max [1, 0] keepdim %h[] domain [] : (!tidal.tensor<[100, 8, 16], f32>) -> !tidal.tensor<[1, 1, 16], f32>
  sdg.output "s" %s[] domain [] : !tidal.tensor<[16], f32>
  sdg.output "m" %m[] domain [] : !tidal.tensor<[1, 1, 16], f32>
}

// -----

// A causal prefix (x[0:t + 1]: a size that grows with the point): tiles n of
// 64 rows up to the largest prefix, N = (T + 63) floordiv 64; at step t the
// partial sums of its t floordiv 64 + 1 tiles are reduced (the tiles past the
// prefix are never needed, so never run), the last one masked (it reads the
// rows min(64 n + j, t) of the prefix).
// CHECK-LABEL: sdg.graph @prefix dims [t < T, n < N = (T + 63) floordiv 64]
// CHECK: sdg.symbol_value <t> domain [t, n]
// CHECK: %[[P:.*]] = sdg.index_select 0 %{{.*}}[0:t + 1], %{{.*}}[t, n] domain [t, n]
// CHECK: %[[E:.*]] = sdg.unary tanh %{{.*}}[t, n] domain [t, n] {{.*}} -> !tidal.tensor<[64, 3], f32>
// CHECK: sdg.symbol_value <t - 64 * n + 1> domain [t, n]
// CHECK: %[[Q:.*]] = sdg.reduce sum [0] %{{.*}}[t, n] domain [t, n]
// CHECK: %[[S:.*]] = sdg.reduce sum [0] %[[Q]][t, 0:t floordiv 64 + 1] domain [t]
// CHECK: sdg.output "y" %[[S]][t]
sdg.graph @prefix dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[3], f32>
  %w = sdg.param "w" dense<[1.0, -2.0, 0.5]> : tensor<3xf32> domain [] : !tidal.tensor<[3], f32>
  %m = sdg.binary mul %x[0:t + 1], %w[] domain [t] : (!tidal.tensor<[3], f32>, !tidal.tensor<[3], f32>) -> !tidal.tensor<[t + 1, 3], f32>
  %e = sdg.unary tanh %m[t] domain [t] : (!tidal.tensor<[t + 1, 3], f32>) -> !tidal.tensor<[t + 1, 3], f32>
  %s = sdg.reduce sum [0] %e[t] domain [t] : (!tidal.tensor<[t + 1, 3], f32>) -> !tidal.tensor<[3], f32>
  sdg.output "y" %s[t] domain [t] : !tidal.tensor<[3], f32>
}

// -----

// A policy gradient's ops that move elements along another axis: the taken
// action's log-probability (take along axis 2), its gradient's zero padding
// (unsqueeze and pad along axis 2), a batched transpose (permute keeping axis
// 0 first) and a broadcast (expand of [T, 4, 1]): all keep row j of axis 0 in
// row j, so the whole chain runs per tile of 64 steps of a static batch.
// CHECK-LABEL: sdg.graph @policy dims [n < N = 4]
// CHECK: %[[T:.*]] = sdg.slice 0 at <64 * n> %{{.*}}[] domain [n] : (!tidal.tensor<[256, 4, 2], f32>) -> !tidal.tensor<[64, 4, 2], f32>
// CHECK: %[[L:.*]] = sdg.take 2 at <1> %[[T]][n] domain [n] : (!tidal.tensor<[64, 4, 2], f32>) -> !tidal.tensor<[64, 4], f32>
// CHECK: %[[U:.*]] = sdg.unsqueeze 2 %[[L]][n] domain [n] : (!tidal.tensor<[64, 4], f32>) -> !tidal.tensor<[64, 4, 1], f32>
// CHECK: %[[P:.*]] = sdg.pad 2 <0> <1> value 0.000000e+00 %[[U]][n] domain [n] : (!tidal.tensor<[64, 4, 1], f32>) -> !tidal.tensor<[64, 4, 2], f32>
// CHECK: %[[E:.*]] = sdg.expand %[[U]][n] domain [n] : (!tidal.tensor<[64, 4, 1], f32>) -> !tidal.tensor<[64, 4, 2], f32>
// CHECK: %[[A:.*]] = sdg.binary add %[[P]][n], %[[E]][n] domain [n]
// CHECK: %[[Q:.*]] = sdg.permute [0, 2, 1] %[[A]][n] domain [n] : (!tidal.tensor<[64, 4, 2], f32>) -> !tidal.tensor<[64, 2, 4], f32>
// CHECK: %[[R:.*]] = sdg.reduce sum [0] %[[Q]][n] domain [n] : (!tidal.tensor<[64, 2, 4], f32>) -> !tidal.tensor<[2, 4], f32>
// CHECK: sdg.reduce sum [0] %[[R]][0:N] domain [] : (!tidal.tensor<[2, 4], f32>) -> !tidal.tensor<[2, 4], f32>
sdg.graph @policy dims [] {
  %x = sdg.input "x" domain [] : !tidal.tensor<[256, 4, 2], f32>
  %l = sdg.take 2 at <1> %x[] domain [] : (!tidal.tensor<[256, 4, 2], f32>) -> !tidal.tensor<[256, 4], f32>
  %u = sdg.unsqueeze 2 %l[] domain [] : (!tidal.tensor<[256, 4], f32>) -> !tidal.tensor<[256, 4, 1], f32>
  %p = sdg.pad 2 <0> <1> value 0.0 %u[] domain [] : (!tidal.tensor<[256, 4, 1], f32>) -> !tidal.tensor<[256, 4, 2], f32>
  %e = sdg.expand %u[] domain [] : (!tidal.tensor<[256, 4, 1], f32>) -> !tidal.tensor<[256, 4, 2], f32>
  %a = sdg.binary add %p[], %e[] domain [] : (!tidal.tensor<[256, 4, 2], f32>, !tidal.tensor<[256, 4, 2], f32>) -> !tidal.tensor<[256, 4, 2], f32>
  %q = sdg.permute [0, 2, 1] %a[] domain [] : (!tidal.tensor<[256, 4, 2], f32>) -> !tidal.tensor<[256, 2, 4], f32>
  %s = sdg.reduce sum [0] %q[] domain [] : (!tidal.tensor<[256, 2, 4], f32>) -> !tidal.tensor<[2, 4], f32>
  sdg.output "s" %s[] domain [] : !tidal.tensor<[2, 4], f32>
}

// -----

// Ops that move axis 0 itself stop the chain: a permute that puts another
// axis first, a take along axis 0 (row 0 of its result is no row of its
// operand). What the reductions read would stay whole, so nothing is tiled.
// CHECK-LABEL: sdg.graph @moves_the_axis dims [] {
// CHECK-NOT: sdg.slice
// CHECK: sdg.reduce sum [0] %{{.*}}[] domain [] : (!tidal.tensor<[256, 4], f32>)
// CHECK: sdg.reduce sum [0] %{{.*}}[] domain [] : (!tidal.tensor<[256, 2], f32>)
sdg.graph @moves_the_axis dims [] {
  %x = sdg.input "x" domain [] : !tidal.tensor<[4, 256], f32>
  %e = sdg.unary exp %x[] domain [] : (!tidal.tensor<[4, 256], f32>) -> !tidal.tensor<[4, 256], f32>
  %q = sdg.permute [1, 0] %e[] domain [] : (!tidal.tensor<[4, 256], f32>) -> !tidal.tensor<[256, 4], f32>
  %s = sdg.reduce sum [0] %q[] domain [] : (!tidal.tensor<[256, 4], f32>) -> !tidal.tensor<[4], f32>
  %y = sdg.input "y" domain [] : !tidal.tensor<[4, 256, 2], f32>
  %k = sdg.unary exp %y[] domain [] : (!tidal.tensor<[4, 256, 2], f32>) -> !tidal.tensor<[4, 256, 2], f32>
  %f = sdg.take 0 at <3> %k[] domain [] : (!tidal.tensor<[4, 256, 2], f32>) -> !tidal.tensor<[256, 2], f32>
  %r = sdg.reduce sum [0] %f[] domain [] : (!tidal.tensor<[256, 2], f32>) -> !tidal.tensor<[2], f32>
  sdg.output "s" %s[] domain [] : !tidal.tensor<[4], f32>
  sdg.output "r" %r[] domain [] : !tidal.tensor<[2], f32>
}

// -----

// Refused: a window whose size varies with the point otherwise than a growing
// prefix (x[t:T] shrinks; x[0:min(t + 1, 5)] stops growing); a reduction
// over another axis; argmax; a reduction of a value that an output reads whole
// (the chain would be empty: slicing a value that stays whole saves nothing);
// an integer max (no exact identity to mask with in sdg.full); 64 rows or
// fewer (one tile).
// CHECK-LABEL: sdg.graph @refused dims [t < T] {
// CHECK-NOT: sdg.pad
// CHECK-NOT: sdg.slice
// CHECK: sdg.reduce sum [0] %{{.*}}[t:T] domain [t]
// CHECK: sdg.reduce sum [0] %{{.*}}[0:min(t + 1, 5)] domain [t]
// CHECK: sdg.reduce sum [1] %{{.*}}[] domain []
// CHECK: sdg.reduce argmax [0] %{{.*}}[] domain []
// CHECK: sdg.reduce sum [0] %{{.*}}[] domain []
// CHECK: sdg.reduce max [0] %{{.*}}[] domain []
// CHECK: sdg.reduce sum [0] %{{.*}}[] domain []
sdg.graph @refused dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[3], f32>
  %a = sdg.reduce sum [0] %x[t:T] domain [t] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  %a2 = sdg.reduce sum [0] %x[0:min(t + 1, 5)] domain [t] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  %y = sdg.input "y" domain [] : !tidal.tensor<[200, 300], f32>
  %b = sdg.reduce sum [1] %y[] domain [] : (!tidal.tensor<[200, 300], f32>) -> !tidal.tensor<[200], f32>
  %c = sdg.reduce argmax [0] %y[] domain [] : (!tidal.tensor<[200, 300], f32>) -> !tidal.tensor<[300], i64>
  %e = sdg.unary exp %y[] domain [] : (!tidal.tensor<[200, 300], f32>) -> !tidal.tensor<[200, 300], f32>
  %d = sdg.reduce sum [0] %e[] domain [] : (!tidal.tensor<[200, 300], f32>) -> !tidal.tensor<[300], f32>
  %z = sdg.input "z" domain [] : !tidal.tensor<[200, 3], i32>
  %zc = sdg.unary neg %z[] domain [] : (!tidal.tensor<[200, 3], i32>) -> !tidal.tensor<[200, 3], i32>
  %f = sdg.reduce max [0] %zc[] domain [] : (!tidal.tensor<[200, 3], i32>) -> !tidal.tensor<[3], i32>
  %s = sdg.input "s" domain [] : !tidal.tensor<[64, 3], f32>
  %se = sdg.unary exp %s[] domain [] : (!tidal.tensor<[64, 3], f32>) -> !tidal.tensor<[64, 3], f32>
  %g = sdg.reduce sum [0] %se[] domain [] : (!tidal.tensor<[64, 3], f32>) -> !tidal.tensor<[3], f32>
  sdg.output "a" %a[t] domain [t] : !tidal.tensor<[3], f32>
  sdg.output "a2" %a2[t] domain [t] : !tidal.tensor<[3], f32>
  sdg.output "b" %b[] domain [] : !tidal.tensor<[200], f32>
  sdg.output "c" %c[] domain [] : !tidal.tensor<[300], i64>
  sdg.output "d" %d[] domain [] : !tidal.tensor<[300], f32>
  sdg.output "e" %e[] domain [] : !tidal.tensor<[200, 300], f32>
  sdg.output "f" %f[] domain [] : !tidal.tensor<[3], i32>
  sdg.output "g" %g[] domain [] : !tidal.tensor<[3], f32>
}

// BAD: tile must be >= 1 (or 0, with tile-bytes >= 1), got tile=-1 tile-bytes=262144
