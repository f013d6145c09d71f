// RUN: tidal-opt %s --split-input-file --sdg-contract | FileCheck %s

// A vectorized weight gradient, per iteration i: the sum over the episode of
// h[t]^T @ g[t] becomes one matmul contracting over the steps and the rows;
// the transpose of h folds into a transpose of h reshaped to (8 * T, 5).
// CHECK-LABEL: sdg.graph @grad
// CHECK: %[[H:.*]] = sdg.input "h"
// CHECK: %[[G:.*]] = sdg.input "g"
// CHECK: %[[F:.*]] = sdg.reshape %[[H]][i, 0:T] domain [i] : (!tidal.tensor<[8, 5], f32>) -> !tidal.tensor<[8 * T, 5], f32>
// CHECK: %[[L:.*]] = sdg.permute [1, 0] %[[F]][i] domain [i] : (!tidal.tensor<[8 * T, 5], f32>) -> !tidal.tensor<[5, 8 * T], f32>
// CHECK: %[[R:.*]] = sdg.reshape %[[G]][i] domain [i] : (!tidal.tensor<[T, 8, 3], f32>) -> !tidal.tensor<[8 * T, 3], f32>
// CHECK: %[[M:.*]] = sdg.matmul %[[L]][i], %[[R]][i] domain [i] : (!tidal.tensor<[5, 8 * T], f32>, !tidal.tensor<[8 * T, 3], f32>) -> !tidal.tensor<[5, 3], f32>
// CHECK-NOT: sdg.reduce
// CHECK: sdg.output "dw" %[[M]][i]
sdg.graph @grad dims [i < I, t < T] {
  %h = sdg.input "h" domain [i, t] : !tidal.tensor<[8, 5], f32>
  %g = sdg.input "g" domain [i] : !tidal.tensor<[T, 8, 3], f32>
  %ht = sdg.permute [0, 2, 1] %h[i, 0:T] domain [i] : (!tidal.tensor<[8, 5], f32>) -> !tidal.tensor<[T, 5, 8], f32>
  %p = sdg.matmul %ht[i], %g[i] domain [i] : (!tidal.tensor<[T, 5, 8], f32>, !tidal.tensor<[T, 8, 3], f32>) -> !tidal.tensor<[T, 5, 3], f32>
  %dw = sdg.reduce sum [0] %p[i] domain [i] : (!tidal.tensor<[T, 5, 3], f32>) -> !tidal.tensor<[5, 3], f32>
  sdg.output "dw" %dw[i] domain [i] : !tidal.tensor<[5, 3], f32>
}

// -----

// One column (a value head's weight gradient): g^T @ h, g^T being a reshape of
// g (its one column is contiguous), then the (1, 5) row reshaped to (5, 1).
// CHECK-LABEL: sdg.graph @column
// CHECK: %[[H:.*]] = sdg.input "h"
// CHECK: %[[G:.*]] = sdg.input "g"
// CHECK: %[[F:.*]] = sdg.reshape %[[H]][i, 0:T] domain [i] : (!tidal.tensor<[8, 5], f32>) -> !tidal.tensor<[8 * T, 5], f32>
// CHECK-NOT: sdg.permute
// CHECK: %[[R:.*]] = sdg.reshape %[[G]][i] domain [i] : (!tidal.tensor<[T, 8, 1], f32>) -> !tidal.tensor<[1, 8 * T], f32>
// CHECK: %[[M:.*]] = sdg.matmul %[[R]][i], %[[F]][i] domain [i] : (!tidal.tensor<[1, 8 * T], f32>, !tidal.tensor<[8 * T, 5], f32>) -> !tidal.tensor<[1, 5], f32>
// CHECK: %[[C:.*]] = sdg.reshape %[[M]][i] domain [i] : (!tidal.tensor<[1, 5], f32>) -> !tidal.tensor<[5, 1], f32>
// CHECK-NOT: sdg.reduce
// CHECK: sdg.output "dw" %[[C]][i]
sdg.graph @column dims [i < I, t < T] {
  %h = sdg.input "h" domain [i, t] : !tidal.tensor<[8, 5], f32>
  %g = sdg.input "g" domain [i] : !tidal.tensor<[T, 8, 1], f32>
  %ht = sdg.permute [0, 2, 1] %h[i, 0:T] domain [i] : (!tidal.tensor<[8, 5], f32>) -> !tidal.tensor<[T, 5, 8], f32>
  %p = sdg.matmul %ht[i], %g[i] domain [i] : (!tidal.tensor<[T, 5, 8], f32>, !tidal.tensor<[T, 8, 1], f32>) -> !tidal.tensor<[T, 5, 1], f32>
  %dw = sdg.reduce sum [0] %p[i] domain [i] : (!tidal.tensor<[T, 5, 1], f32>) -> !tidal.tensor<[5, 1], f32>
  sdg.output "dw" %dw[i] domain [i] : !tidal.tensor<[5, 1], f32>
}

// -----

// Two columns of a 32-wide layer (a policy head's weight gradient): one
// g[..., c]^T @ h per column (a take, a reshape to a row, a matrix-vector
// product), the rows stacked and transposed to (32, 2).
// CHECK-LABEL: sdg.graph @columns
// CHECK: %[[F:.*]] = sdg.reshape %{{.*}}[i, 0:T] domain [i] : (!tidal.tensor<[8, 32], f32>) -> !tidal.tensor<[8 * T, 32], f32>
// CHECK: %[[C0:.*]] = sdg.take 2 at <0> %[[G:.*]][i] domain [i] : (!tidal.tensor<[T, 8, 2], f32>) -> !tidal.tensor<[T, 8], f32>
// CHECK: %[[R0:.*]] = sdg.reshape %[[C0]][i] domain [i] : (!tidal.tensor<[T, 8], f32>) -> !tidal.tensor<[1, 8 * T], f32>
// CHECK: %[[M0:.*]] = sdg.matmul %[[R0]][i], %[[F]][i] domain [i] : (!tidal.tensor<[1, 8 * T], f32>, !tidal.tensor<[8 * T, 32], f32>) -> !tidal.tensor<[1, 32], f32>
// CHECK: %[[C1:.*]] = sdg.take 2 at <1> %[[G]][i] domain [i]
// CHECK: %[[M1:.*]] = sdg.matmul %{{.*}}[i], %[[F]][i] domain [i]
// CHECK: %[[S:.*]] = sdg.concat 0 %[[M0]][i], %[[M1]][i] domain [i] : (!tidal.tensor<[1, 32], f32>, !tidal.tensor<[1, 32], f32>) -> !tidal.tensor<[2, 32], f32>
// CHECK: %[[W:.*]] = sdg.permute [1, 0] %[[S]][i] domain [i] : (!tidal.tensor<[2, 32], f32>) -> !tidal.tensor<[32, 2], f32>
// CHECK-NOT: sdg.reduce
// CHECK: sdg.output "dw" %[[W]][i]
sdg.graph @columns dims [i < I, t < T] {
  %h = sdg.input "h" domain [i, t] : !tidal.tensor<[8, 32], f32>
  %g = sdg.input "g" domain [i] : !tidal.tensor<[T, 8, 2], f32>
  %ht = sdg.permute [0, 2, 1] %h[i, 0:T] domain [i] : (!tidal.tensor<[8, 32], f32>) -> !tidal.tensor<[T, 32, 8], f32>
  %p = sdg.matmul %ht[i], %g[i] domain [i] : (!tidal.tensor<[T, 32, 8], f32>, !tidal.tensor<[T, 8, 2], f32>) -> !tidal.tensor<[T, 32, 2], f32>
  %dw = sdg.reduce sum [0] %p[i] domain [i] : (!tidal.tensor<[T, 32, 2], f32>) -> !tidal.tensor<[32, 2], f32>
  sdg.output "dw" %dw[i] domain [i] : !tidal.tensor<[32, 2], f32>
}

// -----

// keepdim: the contracted (2, 3) product gets its leading axis back; the
// permute is also read elsewhere, so it stays.
// CHECK-LABEL: sdg.graph @keep
// CHECK: %[[P:.*]] = sdg.permute [0, 2, 1]
// CHECK: %[[M:.*]] = sdg.matmul %{{.*}}[], %{{.*}}[] domain [] : (!tidal.tensor<[2, 16], f32>, !tidal.tensor<[16, 3], f32>) -> !tidal.tensor<[2, 3], f32>
// CHECK: %[[U:.*]] = sdg.reshape %[[M]][] domain [] : (!tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[1, 2, 3], f32>
// CHECK: sdg.output "dw" %[[U]][]
// CHECK: sdg.output "pt" %[[P]][]
sdg.graph @keep dims [] {
  %h = sdg.input "h" domain [] : !tidal.tensor<[4, 4, 2], f32>
  %g = sdg.input "g" domain [] : !tidal.tensor<[4, 4, 3], f32>
  %ht = sdg.permute [0, 2, 1] %h[] domain [] : (!tidal.tensor<[4, 4, 2], f32>) -> !tidal.tensor<[4, 2, 4], f32>
  %p = sdg.matmul %ht[], %g[] domain [] : (!tidal.tensor<[4, 2, 4], f32>, !tidal.tensor<[4, 4, 3], f32>) -> !tidal.tensor<[4, 2, 3], f32>
  %dw = sdg.reduce sum [0] keepdim %p[] domain [] : (!tidal.tensor<[4, 2, 3], f32>) -> !tidal.tensor<[1, 2, 3], f32>
  sdg.output "dw" %dw[] domain [] : !tidal.tensor<[1, 2, 3], f32>
  sdg.output "pt" %ht[] domain [] : !tidal.tensor<[4, 2, 4], f32>
}

// -----

// A weight read the same at every step distributes out of the sum:
// sum_t a[t] @ W = (sum_t a[t]) @ W, T times fewer multiply-adds; likewise
// W @ b[t] with the batched operand on the right, keepdim kept by the sum.
// CHECK-LABEL: sdg.graph @distribute
// CHECK: %[[A:.*]] = sdg.input "a"
// CHECK: %[[W:.*]] = sdg.param "w"
// CHECK: %[[S:.*]] = sdg.reduce sum [0] %[[A]][0:T] domain [] : (!tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[2, 3], f32>
// CHECK: %[[M:.*]] = sdg.matmul %[[S]][], %[[W]][] domain [] : (!tidal.tensor<[2, 3], f32>, !tidal.tensor<[3, 4], f32>) -> !tidal.tensor<[2, 4], f32>
// CHECK: %[[S2:.*]] = sdg.reduce sum [0] keepdim %[[A]][0:T] domain [] : (!tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[1, 2, 3], f32>
// CHECK: %[[M2:.*]] = sdg.matmul %[[V:.*]][], %[[S2]][] domain [] : (!tidal.tensor<[2], f32>, !tidal.tensor<[1, 2, 3], f32>) -> !tidal.tensor<[1, 3], f32>
// CHECK-NOT: sdg.reduce
// CHECK: sdg.output "y" %[[M]][]
// CHECK: sdg.output "z" %[[M2]][]
sdg.graph @distribute dims [t < T] {
  %a = sdg.input "a" domain [t] : !tidal.tensor<[2, 3], f32>
  %w = sdg.param "w" dense<1.0> : tensor<3x4xf32> domain [] : !tidal.tensor<[3, 4], f32>
  %v = sdg.param "v" dense<[1.0, -1.0]> : tensor<2xf32> domain [] : !tidal.tensor<[2], f32>
  %p = sdg.matmul %a[0:T], %w[] domain [] : (!tidal.tensor<[2, 3], f32>, !tidal.tensor<[3, 4], f32>) -> !tidal.tensor<[T, 2, 4], f32>
  %y = sdg.reduce sum [0] %p[] domain [] : (!tidal.tensor<[T, 2, 4], f32>) -> !tidal.tensor<[2, 4], f32>
  %q = sdg.matmul %v[], %a[0:T] domain [] : (!tidal.tensor<[2], f32>, !tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[T, 3], f32>
  %z = sdg.reduce sum [0] keepdim %q[] domain [] : (!tidal.tensor<[T, 3], f32>) -> !tidal.tensor<[1, 3], f32>
  sdg.output "y" %y[] domain [] : !tidal.tensor<[2, 4], f32>
  sdg.output "z" %z[] domain [] : !tidal.tensor<[1, 3], f32>
}

// -----

// Refused, each left as it is:
// * @plain: the left operand is not a transpose (merging its batch axis into
//   the contraction would copy it);
// * @varying: the batch axis has t + 1 rows (a point-varying size stays
//   batched, for the padded kernels of a varying axis);
// * @other_axis: a sum over another axis;
// * @shared: the product is read by another op too;
// * @maximum: not a sum.
// CHECK-LABEL: sdg.graph @plain
// CHECK: sdg.matmul {{.*}} -> !tidal.tensor<[4, 2, 3], f32>
// CHECK: sdg.reduce sum [0]
sdg.graph @plain dims [] {
  %h = sdg.input "h" domain [] : !tidal.tensor<[4, 2, 4], f32>
  %g = sdg.input "g" domain [] : !tidal.tensor<[4, 4, 3], f32>
  %p = sdg.matmul %h[], %g[] domain [] : (!tidal.tensor<[4, 2, 4], f32>, !tidal.tensor<[4, 4, 3], f32>) -> !tidal.tensor<[4, 2, 3], f32>
  %dw = sdg.reduce sum [0] %p[] domain [] : (!tidal.tensor<[4, 2, 3], f32>) -> !tidal.tensor<[2, 3], f32>
  sdg.output "dw" %dw[] domain [] : !tidal.tensor<[2, 3], f32>
}

// CHECK-LABEL: sdg.graph @varying
// CHECK: sdg.matmul {{.*}} -> !tidal.tensor<[t + 1, 5, 3], f32>
// CHECK: sdg.reduce sum [0]
sdg.graph @varying dims [t < T] {
  %h = sdg.input "h" domain [t] : !tidal.tensor<[8, 5], f32>
  %g = sdg.input "g" domain [t] : !tidal.tensor<[8, 3], f32>
  %ht = sdg.permute [0, 2, 1] %h[0:t + 1] domain [t] : (!tidal.tensor<[8, 5], f32>) -> !tidal.tensor<[t + 1, 5, 8], f32>
  %p = sdg.matmul %ht[t], %g[0:t + 1] domain [t] : (!tidal.tensor<[t + 1, 5, 8], f32>, !tidal.tensor<[8, 3], f32>) -> !tidal.tensor<[t + 1, 5, 3], f32>
  %dw = sdg.reduce sum [0] %p[t] domain [t] : (!tidal.tensor<[t + 1, 5, 3], f32>) -> !tidal.tensor<[5, 3], f32>
  sdg.output "dw" %dw[t] domain [t] : !tidal.tensor<[5, 3], f32>
}

// CHECK-LABEL: sdg.graph @other_axis
// CHECK: sdg.matmul {{.*}} -> !tidal.tensor<[4, 2, 3], f32>
// CHECK: sdg.reduce sum [1]
sdg.graph @other_axis dims [] {
  %h = sdg.input "h" domain [] : !tidal.tensor<[4, 4, 2], f32>
  %g = sdg.input "g" domain [] : !tidal.tensor<[4, 4, 3], f32>
  %ht = sdg.permute [0, 2, 1] %h[] domain [] : (!tidal.tensor<[4, 4, 2], f32>) -> !tidal.tensor<[4, 2, 4], f32>
  %p = sdg.matmul %ht[], %g[] domain [] : (!tidal.tensor<[4, 2, 4], f32>, !tidal.tensor<[4, 4, 3], f32>) -> !tidal.tensor<[4, 2, 3], f32>
  %dw = sdg.reduce sum [1] %p[] domain [] : (!tidal.tensor<[4, 2, 3], f32>) -> !tidal.tensor<[4, 3], f32>
  sdg.output "dw" %dw[] domain [] : !tidal.tensor<[4, 3], f32>
}

// CHECK-LABEL: sdg.graph @shared
// CHECK: sdg.matmul {{.*}} -> !tidal.tensor<[4, 2, 3], f32>
// CHECK: sdg.reduce sum [0]
sdg.graph @shared dims [] {
  %h = sdg.input "h" domain [] : !tidal.tensor<[4, 4, 2], f32>
  %g = sdg.input "g" domain [] : !tidal.tensor<[4, 4, 3], f32>
  %ht = sdg.permute [0, 2, 1] %h[] domain [] : (!tidal.tensor<[4, 4, 2], f32>) -> !tidal.tensor<[4, 2, 4], f32>
  %p = sdg.matmul %ht[], %g[] domain [] : (!tidal.tensor<[4, 2, 4], f32>, !tidal.tensor<[4, 4, 3], f32>) -> !tidal.tensor<[4, 2, 3], f32>
  %dw = sdg.reduce sum [0] %p[] domain [] : (!tidal.tensor<[4, 2, 3], f32>) -> !tidal.tensor<[2, 3], f32>
  sdg.output "dw" %dw[] domain [] : !tidal.tensor<[2, 3], f32>
  sdg.output "p" %p[] domain [] : !tidal.tensor<[4, 2, 3], f32>
}

// CHECK-LABEL: sdg.graph @maximum
// CHECK: sdg.matmul {{.*}} -> !tidal.tensor<[T, 2, 4], f32>
// CHECK: sdg.reduce max [0]
sdg.graph @maximum dims [t < T] {
  %a = sdg.input "a" domain [t] : !tidal.tensor<[2, 3], f32>
  %w = sdg.param "w" dense<1.0> : tensor<3x4xf32> domain [] : !tidal.tensor<[3, 4], f32>
  %p = sdg.matmul %a[0:T], %w[] domain [] : (!tidal.tensor<[2, 3], f32>, !tidal.tensor<[3, 4], f32>) -> !tidal.tensor<[T, 2, 4], f32>
  %y = sdg.reduce max [0] %p[] domain [] : (!tidal.tensor<[T, 2, 4], f32>) -> !tidal.tensor<[2, 4], f32>
  sdg.output "y" %y[] domain [] : !tidal.tensor<[2, 4], f32>
}
