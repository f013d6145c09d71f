// sdg-vectorize over bounded windows (passes/vectorize_windows.py): ops over t
// that read a window whose size varies with t but has a constant bound (n-step
// returns r[t:min(t + n, T)], a sliding window x[max(t - 2, 0):t + 1]) are
// batched at that capacity: the window is one gather of (T, capacity) rows,
// ops that combine its rows read the padding as their identity.
// RUN: tidal-opt %s --split-input-file --sdg-vectorize | FileCheck %s
// Switched off, windows stay per step:
// RUN: tidal-opt %s --split-input-file --sdg-vectorize=windows=false | FileCheck %s --check-prefix=OFF

// A forward window of 3 rows: rows clamp(t + j, 0, T - 1) of all of r; a forward
// cumsum needs no mask (its valid rows read valid rows), the iota is made at the
// capacity, the sum reads the padding as 0 and the max as -inf (one mask for both).
// CHECK-LABEL: sdg.graph @window
// CHECK: %[[T:.*]] = sdg.iota 0 domain [] : !tidal.tensor<[T, 3], i64>
// CHECK: %[[J:.*]] = sdg.iota 1 domain [] : !tidal.tensor<[T, 3], i64>
// CHECK: %[[AT:.*]] = sdg.binary add %[[T]][], %[[J]][] domain []
// CHECK: %[[LAST:.*]] = sdg.symbol_value <T - 1> domain []
// CHECK: %[[LO:.*]] = sdg.binary min %[[AT]][], %[[LAST]][] domain []
// CHECK: %[[IDX:.*]] = sdg.reshape {{.*}} -> !tidal.tensor<[3 * T], i64>
// CHECK: %[[ROWS:.*]] = sdg.index_select 0 %{{.*}}[0:T], %[[IDX]][] domain [] : (!tidal.tensor<[4], f32>, !tidal.tensor<[3 * T], i64>) -> !tidal.tensor<[3 * T, 4], f32>
// CHECK: %[[W:.*]] = sdg.reshape %[[ROWS]][] domain [] : (!tidal.tensor<[3 * T, 4], f32>) -> !tidal.tensor<[T, 3, 4], f32>
// CHECK: %[[C:.*]] = sdg.scan cumsum 1 %[[W]][] domain [] : (!tidal.tensor<[T, 3, 4], f32>) -> !tidal.tensor<[T, 3, 4], f32>
// CHECK: sdg.iota 1 domain [] : !tidal.tensor<[T, 3], i64>
// CHECK: %[[M:.*]] = sdg.binary mul %[[C]][], %{{.*}}[] domain [] : (!tidal.tensor<[T, 3, 4], f32>, !tidal.tensor<[T, 3, 1], f32>)
// CHECK: %[[N:.*]] = sdg.symbol_value <T> domain []
// CHECK: %[[SIZE:.*]] = sdg.binary min
// CHECK: %[[VALID:.*]] = sdg.binary lt %{{.*}}[], %[[SIZE]][] domain [] : {{.*}} -> !tidal.tensor<[T, 3, 1], i1>
// CHECK: %[[ZERO:.*]] = sdg.full 0.000000e+00 domain [] : !tidal.tensor<[], f32>
// CHECK: %[[MS:.*]] = sdg.where %[[VALID]][], %[[M]][], %[[ZERO]][] domain []
// CHECK: %[[S:.*]] = sdg.reduce sum [1] %[[MS]][] domain [] : (!tidal.tensor<[T, 3, 4], f32>) -> !tidal.tensor<[T, 4], f32>
// CHECK: %[[NEG:.*]] = sdg.full 0xFFF0000000000000 domain [] : !tidal.tensor<[], f32>
// CHECK: %[[WX:.*]] = sdg.where %[[VALID]][], %[[W]][], %[[NEG]][] domain []
// CHECK: %[[X:.*]] = sdg.reduce max [1] %[[WX]][] domain [] : (!tidal.tensor<[T, 3, 4], f32>) -> !tidal.tensor<[T, 4], f32>
// CHECK: sdg.binary add %[[S]][], %[[X]][] domain [] : (!tidal.tensor<[T, 4], f32>, !tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[T, 4], f32>
// CHECK-NOT: domain [t] : (
// OFF-LABEL: sdg.graph @window
// OFF: sdg.scan cumsum 0 %{{.*}}[t:min(t + 3, T)] domain [t]
// OFF-NOT: sdg.index_select
sdg.graph @window dims [t < T] {
  %r = sdg.input "r" domain [t] : !tidal.tensor<[4], f32>
  %c = sdg.scan cumsum 0 %r[t:min(t + 3, T)] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[min(T - t, 3), 4], f32>
  %k = sdg.iota 0 domain [t] : !tidal.tensor<[min(T - t, 3)], i64>
  %kf = sdg.cast %k[t] domain [t] : (!tidal.tensor<[min(T - t, 3)], i64>) -> !tidal.tensor<[min(T - t, 3)], f32>
  %ku = sdg.unsqueeze 1 %kf[t] domain [t] : (!tidal.tensor<[min(T - t, 3)], f32>) -> !tidal.tensor<[min(T - t, 3), 1], f32>
  %m = sdg.binary mul %c[t], %ku[t] domain [t] : (!tidal.tensor<[min(T - t, 3), 4], f32>, !tidal.tensor<[min(T - t, 3), 1], f32>) -> !tidal.tensor<[min(T - t, 3), 4], f32>
  %s = sdg.reduce sum [0] %m[t] domain [t] : (!tidal.tensor<[min(T - t, 3), 4], f32>) -> !tidal.tensor<[4], f32>
  %x = sdg.reduce max [0] %r[t:min(t + 3, T)] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %b = sdg.binary add %s[t], %x[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %a = sdg.reduce sum [0] %b[0:T] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "a" %a[] domain [] : !tidal.tensor<[4], f32>
}

// -----

// A sliding window of the last 3 rows (valid rows first: gathered from max(t - 2, 0));
// a reverse cumsum reads the padding as 0 first, then the sum does (one mask).
// CHECK-LABEL: sdg.graph @backward
// CHECK: %[[T:.*]] = sdg.iota 0 domain [] : !tidal.tensor<[T, 3], i64>
// CHECK: %[[TWO:.*]] = sdg.symbol_value <2> domain []
// CHECK: %[[SH:.*]] = sdg.binary sub %[[T]][], %[[TWO]][] domain []
// CHECK: sdg.binary max %{{.*}}[], %[[SH]][] domain []
// CHECK: %[[W:.*]] = sdg.reshape {{.*}} -> !tidal.tensor<[T, 3, 2], f32>
// CHECK: %[[VALID:.*]] = sdg.binary lt {{.*}} -> !tidal.tensor<[T, 3, 1], i1>
// CHECK: %[[WM:.*]] = sdg.where %[[VALID]][], %[[W]][], %{{.*}}[] domain []
// CHECK: %[[C:.*]] = sdg.scan cumsum 1 reverse %[[WM]][] domain [] : (!tidal.tensor<[T, 3, 2], f32>) -> !tidal.tensor<[T, 3, 2], f32>
// CHECK: %[[CM:.*]] = sdg.where %[[VALID]][], %[[C]][], %{{.*}}[] domain []
// CHECK: sdg.reduce sum [1] %[[CM]][] domain [] : (!tidal.tensor<[T, 3, 2], f32>) -> !tidal.tensor<[T, 2], f32>
sdg.graph @backward dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[2], f32>
  %c = sdg.scan cumsum 0 reverse %x[max(t - 2, 0):t + 1] domain [t] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[min(t + 1, 3), 2], f32>
  %s = sdg.reduce sum [0] %c[t] domain [t] : (!tidal.tensor<[min(t + 1, 3), 2], f32>) -> !tidal.tensor<[2], f32>
  %a = sdg.reduce sum [0] %s[0:T] domain [] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[2], f32>
  sdg.output "a" %a[] domain [] : !tidal.tensor<[2], f32>
}

// -----

// Refused: a growing window (t + 1 rows: no constant bound), a window read by an
// output at every step (it needs each point when it is ready), a reshape of a
// varying axis (and the sum that reads it), an argmax over a window (no identity).
// CHECK-LABEL: sdg.graph @window_refused
// CHECK: sdg.reduce sum [0] %{{.*}}[0:t + 1] domain [t]
// CHECK: sdg.reduce sum [0] %{{.*}}[t:min(t + 3, T)] domain [t]
// CHECK: sdg.unary exp %{{.*}}[t:min(t + 3, T)] domain [t]
// CHECK: sdg.reshape %{{.*}}[t] domain [t]
// CHECK: sdg.reduce argmax [0] %{{.*}}[t:min(t + 3, T)] domain [t]
// CHECK: sdg.reduce sum [0] %{{.*}}[t] domain [t] : (!tidal.tensor<[2 * min(T - t, 3)], f32>)
// CHECK-NOT: sdg.index_select
sdg.graph @window_refused dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[2], f32>
  %g = sdg.reduce sum [0] %x[0:t + 1] domain [t] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[2], f32>
  %p = sdg.reduce sum [0] %x[t:min(t + 3, T)] domain [t] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[2], f32>
  %e = sdg.unary exp %x[t:min(t + 3, T)] domain [t] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[min(T - t, 3), 2], f32>
  %f = sdg.reshape %e[t] domain [t] : (!tidal.tensor<[min(T - t, 3), 2], f32>) -> !tidal.tensor<[2 * min(T - t, 3)], f32>
  %m = sdg.reduce argmax [0] %x[t:min(t + 3, T)] domain [t] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[2], i64>
  %ga = sdg.reduce sum [0] %g[0:T] domain [] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[2], f32>
  %fa = sdg.reduce sum [0] %f[t] domain [t] : (!tidal.tensor<[2 * min(T - t, 3)], f32>) -> !tidal.tensor<[], f32>
  %fs = sdg.reduce sum [0] %fa[0:T] domain [] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
  %ms = sdg.reduce sum [0] %m[0:T] domain [] : (!tidal.tensor<[2], i64>) -> !tidal.tensor<[2], i64>
  sdg.output "g" %ga[] domain [] : !tidal.tensor<[2], f32>
  sdg.output "p" %p[t] domain [t] : !tidal.tensor<[2], f32>
  sdg.output "f" %fs[] domain [] : !tidal.tensor<[], f32>
  sdg.output "m" %ms[] domain [] : !tidal.tensor<[2], i64>
}

// -----

// Integers: a sum over a window is batched (the padding reads 0); a max is
// refused (an integer has no -inf to write in the padding).
// CHECK-LABEL: sdg.graph @integers
// CHECK: sdg.reduce max [0] %{{.*}}[t:min(t + 2, T)] domain [t] : (!tidal.tensor<[3], i64>) -> !tidal.tensor<[3], i64>
// CHECK: %[[ROWS:.*]] = sdg.reshape {{.*}} -> !tidal.tensor<[T, 2, 3], i64>
// CHECK: %[[Z:.*]] = sdg.full 0.000000e+00 domain [] : !tidal.tensor<[], i64>
// CHECK: %[[M:.*]] = sdg.where %{{.*}}[], %[[ROWS]][], %[[Z]][] domain []
// CHECK: sdg.reduce sum [1] %[[M]][] domain [] : (!tidal.tensor<[T, 2, 3], i64>) -> !tidal.tensor<[T, 3], i64>
sdg.graph @integers dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[3], i64>
  %m = sdg.reduce max [0] %x[t:min(t + 2, T)] domain [t] : (!tidal.tensor<[3], i64>) -> !tidal.tensor<[3], i64>
  %s = sdg.reduce sum [0] %x[t:min(t + 2, T)] domain [t] : (!tidal.tensor<[3], i64>) -> !tidal.tensor<[3], i64>
  %ms = sdg.reduce sum [0] %m[0:T] domain [] : (!tidal.tensor<[3], i64>) -> !tidal.tensor<[3], i64>
  %ss = sdg.reduce sum [0] %s[0:T] domain [] : (!tidal.tensor<[3], i64>) -> !tidal.tensor<[3], i64>
  sdg.output "m" %ms[] domain [] : !tidal.tensor<[3], i64>
  sdg.output "s" %ss[] domain [] : !tidal.tensor<[3], i64>
}
