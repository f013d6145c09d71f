// RUN: tidal-opt %s --split-input-file --sdg-lift | FileCheck %s

// Prefix sums (TEMPO Fig. 10): y[t] = x[0:t+1].sum(0) becomes the cumulative sum
// of x[0:T] read at t; a suffix max with keepdim a reverse cummax sliced at t.
// CHECK-LABEL: sdg.graph @prefix_sum
// CHECK: %[[X:.*]] = sdg.input "x"
// CHECK: %[[C:.*]] = sdg.scan cumsum 0 %[[X]][0:T] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[T, 4], f32>
// CHECK: %[[Y:.*]] = sdg.take 0 at <t> %[[C]][] domain [t] : (!tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[4], f32>
// CHECK: %[[M:.*]] = sdg.scan cummax 0 reverse %[[X]][0:T] domain []
// CHECK: %[[K:.*]] = sdg.slice 0 at <t> %[[M]][] domain [t] : (!tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[1, 4], f32>
// CHECK-NOT: sdg.reduce
// CHECK: sdg.output "y" %[[Y]][t]
// CHECK: sdg.output "k" %[[K]][t]
sdg.graph @prefix_sum dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %y = sdg.reduce sum [0] %x[0:t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %k = sdg.reduce max [0] keepdim %x[t:T] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[1, 4], f32>
  sdg.output "y" %y[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "k" %k[t] domain [t] : !tidal.tensor<[1, 4], f32>
}

// -----

// Returns cut at episode ends (td.discounted_sum with per-step discounts): the
// elementwise chain over the window is computed once over 0:T, the reverse
// linear scan runs once per i, and the take at 0 of its window is a take at t.
// CHECK-LABEL: sdg.graph @returns
// CHECK: %[[R:.*]] = sdg.input "r" domain [i, t]
// CHECK: %[[D:.*]] = sdg.input "d" domain [i, t]
// CHECK: %[[S:.*]] = sdg.binary sub %{{.*}}[], %[[D]][i, 0:T] domain [i] : {{.*}} -> !tidal.tensor<[T, 2], f32>
// CHECK: %[[A:.*]] = sdg.binary mul %{{.*}}[], %[[S]][i] domain [i] : {{.*}} -> !tidal.tensor<[T, 2], f32>
// CHECK: %[[L:.*]] = sdg.linear_scan 0 reverse %[[A]][i], %[[R]][i, 0:T] domain [i] : {{.*}} -> !tidal.tensor<[T, 2], f32>
// CHECK: %[[G:.*]] = sdg.take 0 at <t> %[[L]][i] domain [i, t] : (!tidal.tensor<[T, 2], f32>) -> !tidal.tensor<[2], f32>
// CHECK-NOT: T - t
// CHECK: sdg.output "g" %[[G]][i, t]
sdg.graph @returns dims [i < I, t < T] {
  %r = sdg.input "r" domain [i, t] : !tidal.tensor<[2], f32>
  %d = sdg.input "d" domain [i, t] : !tidal.tensor<[2], f32>
  %one = sdg.constant dense<1.0> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %s = sdg.binary sub %one[], %d[i, t:T] domain [i, t] : (!tidal.tensor<[], f32>, !tidal.tensor<[2], f32>) -> !tidal.tensor<[T - t, 2], f32>
  %gamma = sdg.constant dense<0.9> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %a = sdg.binary mul %gamma[], %s[i, t] domain [i, t] : (!tidal.tensor<[], f32>, !tidal.tensor<[T - t, 2], f32>) -> !tidal.tensor<[T - t, 2], f32>
  %l = sdg.linear_scan 0 reverse %a[i, t], %r[i, t:T] domain [i, t] : (!tidal.tensor<[T - t, 2], f32>, !tidal.tensor<[2], f32>) -> !tidal.tensor<[T - t, 2], f32>
  %g = sdg.take 0 at <0> %l[i, t] domain [i, t] : (!tidal.tensor<[T - t, 2], f32>) -> !tidal.tensor<[2], f32>
  sdg.output "g" %g[i, t] domain [i, t] : !tidal.tensor<[2], f32>
}

// -----

// td.discounted_sum(x, 0.5) over r[t:T] (sum of x * 0.5 ** position): a reverse
// linear scan with the constant discount expanded over the whole range.
// CHECK-LABEL: sdg.graph @discounted
// CHECK: %[[X:.*]] = sdg.input "x"
// CHECK: %[[G:.*]] = sdg.constant dense<5.000000e-01>
// CHECK: %[[E:.*]] = sdg.expand %[[G]][] domain [] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[T], f32>
// CHECK: %[[L:.*]] = sdg.linear_scan 0 reverse %[[E]][], %[[X]][0:T] domain []
// CHECK: sdg.take 0 at <t> %[[L]][] domain [t]
// CHECK-NOT: sdg.reduce
sdg.graph @discounted dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[], f32>
  %gamma = sdg.constant dense<0.5> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %k = sdg.iota 0 domain [t] : !tidal.tensor<[T - t], i64>
  %kf = sdg.cast %k[t] domain [t] : (!tidal.tensor<[T - t], i64>) -> !tidal.tensor<[T - t], f32>
  %w = sdg.binary pow %gamma[], %kf[t] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[T - t], f32>) -> !tidal.tensor<[T - t], f32>
  %p = sdg.binary mul %x[t:T], %w[t] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[T - t], f32>) -> !tidal.tensor<[T - t], f32>
  %s = sdg.reduce sum [0] %p[t] domain [t] : (!tidal.tensor<[T - t], f32>) -> !tidal.tensor<[], f32>
  sdg.output "s" %s[t] domain [t] : !tidal.tensor<[], f32>
}

// -----

// Sums over sliding windows that can hold more than 32 rows (min-window: a
// trailing window of 100 of exp(x), a leading one of 100 cut at the end) become
// differences of one cumulative sum of the whole range, accumulated in f64,
// with a zero row in front: cz[hi] - cz[lo]. A window of 3 stays a direct sum
// (cheaper), and so does a float64 window (no wider type to accumulate in).
// CHECK-LABEL: sdg.graph @sliding
// CHECK: %[[X:.*]] = sdg.input "x"
// CHECK: %[[E:.*]] = sdg.unary exp %[[X]][t]
// CHECK: %[[W:.*]] = sdg.cast %[[E]][0:T] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[T, 4], f64>
// CHECK: %[[C:.*]] = sdg.scan cumsum 0 %[[W]][] domain []
// CHECK: %[[Z:.*]] = sdg.pad 0 <1> <0> value 0.000000e+00 %[[C]][] domain [] : (!tidal.tensor<[T, 4], f64>) -> !tidal.tensor<[T + 1, 4], f64>
// CHECK: %[[LO:.*]] = sdg.take 0 at <max(0, t - 99)> %[[Z]][] domain [t]
// CHECK: %[[HI:.*]] = sdg.take 0 at <t + 1> %[[Z]][] domain [t]
// CHECK: %[[D:.*]] = sdg.binary sub %[[HI]][t], %[[LO]][t] domain [t]
// CHECK: %[[S:.*]] = sdg.cast %[[D]][t] domain [t] : (!tidal.tensor<[4], f64>) -> !tidal.tensor<[4], f32>
// CHECK: sdg.take 0 at <t> %{{.*}}[] domain [t]
// CHECK: sdg.take 0 at <min(t + 100, T)> %{{.*}}[] domain [t]
// CHECK: sdg.reduce sum [0] %{{.*}}[t:min(t + 3, T)] domain [t] : (!tidal.tensor<[4], f32>)
// CHECK: sdg.reduce sum [0] %{{.*}}[t:min(t + 100, T)] domain [t] : (!tidal.tensor<[4], f64>)
// CHECK: sdg.output "w" %[[S]][t]
sdg.graph @sliding dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %e = sdg.unary exp %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %s = sdg.reduce sum [0] %e[max(0, t - 99):t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %a = sdg.reduce sum [0] %x[t:min(t + 100, T)] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %n = sdg.reduce sum [0] %x[t:min(t + 3, T)] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %y = sdg.input "y" domain [t] : !tidal.tensor<[4], f64>
  %b = sdg.reduce sum [0] %y[t:min(t + 100, T)] domain [t] : (!tidal.tensor<[4], f64>) -> !tidal.tensor<[4], f64>
  sdg.output "w" %s[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "a" %a[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "n" %n[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "b" %b[t] domain [t] : !tidal.tensor<[4], f64>
}

// -----

// Refused: a maximum over a window that is neither a suffix nor a prefix
// (only sums of such windows lift, below), a forward scan over a suffix, a reduction over another axis, argmax, a window
// value through a matmul, an element read at t broadcast across the window,
// and a reduction on a cycle (a recurrence that reads its own prefix).
// CHECK-LABEL: sdg.graph @refused
// CHECK: sdg.reduce max [0] %{{.*}}[t:min(t + 3, T)] domain [t]
// CHECK: sdg.linear_scan 0 %{{.*}}[t], %{{.*}}[t:T] domain [t]
// CHECK: sdg.reduce sum [1] %{{.*}}[0:t + 1] domain [t]
// CHECK: sdg.reduce argmax [0] %{{.*}}[0:t + 1] domain [t]
// CHECK: sdg.reduce sum [0] %{{.*}}[t] domain [t] : (!tidal.tensor<[t + 1, 4], f32>)
// CHECK: sdg.reduce sum [0] %{{.*}}[t] domain [t] : (!tidal.tensor<[t + 1, 4], f32>)
// CHECK: sdg.reduce sum [0] %{{.*}}[0:t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
// CHECK-NOT: sdg.scan
sdg.graph @refused dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %n = sdg.reduce max [0] %x[t:min(t + 3, T)] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %a = sdg.full 1.0 domain [t] : !tidal.tensor<[T - t, 4], f32>
  %f = sdg.linear_scan 0 %a[t], %x[t:T] domain [t] : (!tidal.tensor<[T - t, 4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[T - t, 4], f32>
  %o = sdg.reduce sum [1] %x[0:t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[t + 1], f32>
  %m = sdg.reduce argmax [0] %x[0:t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], i64>
  %w = sdg.input "w" domain [] : !tidal.tensor<[4, 4], f32>
  %mm = sdg.matmul %x[0:t + 1], %w[] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4, 4], f32>) -> !tidal.tensor<[t + 1, 4], f32>
  %ms = sdg.reduce sum [0] %mm[t] domain [t] : (!tidal.tensor<[t + 1, 4], f32>) -> !tidal.tensor<[4], f32>
  %b = sdg.binary add %x[0:t + 1], %x[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[t + 1, 4], f32>
  %bs = sdg.reduce sum [0] %b[t] domain [t] : (!tidal.tensor<[t + 1, 4], f32>) -> !tidal.tensor<[4], f32>
  %z = sdg.merge %x[0] if <t eq 0>, %c[t - 1] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %c = sdg.reduce sum [0] %z[0:t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "n" %n[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "f" %f[t] domain [t] : !tidal.tensor<[T - t, 4], f32>
  sdg.output "o" %o[t] domain [t] : !tidal.tensor<[t + 1], f32>
  sdg.output "m" %m[t] domain [t] : !tidal.tensor<[4], i64>
  sdg.output "ms" %ms[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "bs" %bs[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "c" %c[t] domain [t] : !tidal.tensor<[4], f32>
}

// -----

// Refused without failing: a strided read (fuzz finding F17: sdg-lift raised on it).
// CHECK-LABEL: sdg.graph @strided
// CHECK: sdg.reduce sum [0] %{{.*}}[0:I:2, t] domain [t]
sdg.graph @strided dims [i < I, t < T] {
  %x = sdg.input "x" domain [i, t] : !tidal.tensor<[], f32>
  %s = sdg.reduce sum [0] %x[0:I:2, t] domain [t] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
  sdg.output "s" %s[t] domain [t] : !tidal.tensor<[], f32>
}
