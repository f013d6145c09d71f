// RUN: tidal-opt %s --split-input-file --pass-pipeline='builtin.module(sdg-accumulate{min-bytes=0})' | FileCheck %s
// RUN: tidal-opt %s --split-input-file --sdg-accumulate | FileCheck %s --check-prefix=DEFAULT
// RUN: tidal-opt %s --split-input-file --pass-pipeline='builtin.module(sdg-accumulate{min-bytes=4096 assume-bound=64})' | FileCheck %s --check-prefix=SIZE

// The sum over an iteration's steps of a per-step gradient (x over [i, t])
// becomes a running sum over t: the merge starts at x[i, 0], adds x[i, t] to
// its value at t - 1, and the readers (a weight update, an output) read its
// last point, T - 1. The default threshold (256 MiB for the [T, 8, 2] block
// at T = 1024) leaves it alone; 4096 bytes at T = 64 (64 x 16 x 4) carries it.
// CHECK-LABEL: sdg.graph @grads
// CHECK: %[[X:.*]] = sdg.input "x" domain [i, t]
// CHECK: %[[W0:.*]] = sdg.param "w0"
// CHECK: %[[ACC:.*]] = sdg.merge %[[X]][i, 0] if <t eq 0>, %[[N:.*]][i, t] if <true> domain [i, t] : (!tidal.tensor<[8, 2], f32>, !tidal.tensor<[8, 2], f32>) -> !tidal.tensor<[8, 2], f32>
// CHECK: %[[N]] = sdg.binary add %[[ACC]][i, t - 1], %[[X]][i, t] domain [i, t]
// CHECK-NOT: sdg.reduce
// CHECK: %[[W:.*]] = sdg.binary sub %[[W0]][], %[[ACC]][i, T - 1] domain [i]
// CHECK: sdg.output "w" %[[W]][i] domain [i]
// CHECK: sdg.output "s" %[[ACC]][i, T - 1] domain [i]
// DEFAULT-LABEL: sdg.graph @grads
// DEFAULT: sdg.reduce sum [0] %{{.*}}[i, 0:T] domain [i]
// SIZE-LABEL: sdg.graph @grads
// SIZE-NOT: sdg.reduce
// SIZE: sdg.merge
sdg.graph @grads dims [i < I, t < T] {
  %x = sdg.input "x" domain [i, t] : !tidal.tensor<[8, 2], f32>
  %w0 = sdg.param "w0" dense<1.0> : tensor<8x2xf32> domain [] : !tidal.tensor<[8, 2], f32>
  %s = sdg.reduce sum [0] %x[i, 0:T] domain [i] : (!tidal.tensor<[8, 2], f32>) -> !tidal.tensor<[8, 2], f32>
  %w = sdg.binary sub %w0[], %s[i] domain [i] : (!tidal.tensor<[8, 2], f32>, !tidal.tensor<[8, 2], f32>) -> !tidal.tensor<[8, 2], f32>
  sdg.output "w" %w[i] domain [i] : !tidal.tensor<[8, 2], f32>
  sdg.output "s" %s[i] domain [i] : !tidal.tensor<[8, 2], f32>
}

// -----

// max and min carry with the binary op of the same name, prod with mul; the
// running value follows the reducer's dims (here none) and the read of x at a
// shifted point of the other dim (x[i - 1, 0:T] read over [i]) keeps its shift.
// CHECK-LABEL: sdg.graph @kinds
// CHECK: %[[X:.*]] = sdg.input "x"
// CHECK: %[[M:.*]] = sdg.merge %[[X]][0, 0] if <t eq 0>, %[[A:.*]][t] if <true> domain [t]
// CHECK: %[[A]] = sdg.binary max %[[M]][t - 1], %[[X]][0, t] domain [t]
// CHECK: %[[P:.*]] = sdg.merge %[[X]][i - 1, 0] if <t eq 0>, %[[B:.*]][i, t] if <true> domain [i, t]
// CHECK: %[[B]] = sdg.binary mul %[[P]][i, t - 1], %[[X]][i - 1, t] domain [i, t]
// CHECK: %[[Q:.*]] = sdg.merge %[[X]][i, 0] if <t eq 0>, %[[C:.*]][i, t] if <true> domain [i, t]
// CHECK: %[[C]] = sdg.binary min %[[Q]][i, t - 1], %[[X]][i, t] domain [i, t]
// CHECK: sdg.output "max" %[[M]][T - 1] domain []
// CHECK: sdg.output "prod" %[[P]][i, T - 1] domain [i]
// CHECK: sdg.output "min" %[[Q]][i, T - 1] domain [i]
sdg.graph @kinds dims [i < I, t < T] {
  %x = sdg.input "x" domain [i, t] : !tidal.tensor<[3], f32>
  %mx = sdg.reduce max [0] %x[0, 0:T] domain [] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  %pr = sdg.reduce prod [0] %x[i - 1, 0:T] domain [i] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  %mn = sdg.reduce min [0] %x[i, 0:T] domain [i] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  sdg.output "max" %mx[] domain [] : !tidal.tensor<[3], f32>
  sdg.output "prod" %pr[i] domain [i] : !tidal.tensor<[3], f32>
  sdg.output "min" %mn[i] domain [i] : !tidal.tensor<[3], f32>
}

// -----

// Refused: a reduction over other axes too ([0, 1]); a slice that is not all
// of the step (0:t + 1, T - 1 points); two slices; a reduction over the step's
// own domain; a boolean any.
// CHECK-LABEL: sdg.graph @refused
// CHECK-NOT: sdg.merge
// CHECK-COUNT-5: sdg.reduce
sdg.graph @refused dims [i < I, t < T] {
  %x = sdg.input "x" domain [i, t] : !tidal.tensor<[3], f32>
  %b = sdg.input "b" domain [i, t] : !tidal.tensor<[3], i1>
  %a1 = sdg.reduce sum [0, 1] %x[i, 0:T] domain [i] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[], f32>
  %a2 = sdg.reduce sum [0] %x[i, 0:T - 1] domain [i] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  %a3 = sdg.reduce sum [0] %x[0:I, 0:T] domain [] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[T, 3], f32>
  %a4 = sdg.reduce sum [0] %x[i, 0:t + 1] domain [i, t] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  %a5 = sdg.reduce any [0] %b[i, 0:T] domain [i] : (!tidal.tensor<[3], i1>) -> !tidal.tensor<[3], i1>
  sdg.output "a1" %a1[i] domain [i] : !tidal.tensor<[], f32>
  sdg.output "a2" %a2[i] domain [i] : !tidal.tensor<[3], f32>
  sdg.output "a3" %a3[] domain [] : !tidal.tensor<[T, 3], f32>
  sdg.output "a4" %a4[i, t] domain [i, t] : !tidal.tensor<[3], f32>
  sdg.output "a5" %a5[i] domain [i] : !tidal.tensor<[3], i1>
}

// -----

// A bf16 sum carries in f32 (in bf16, 256 + 1 is 256): the points are cast to
// f32, the readers read the last running value cast back to bf16. A max stays
// in bf16 (it does not round).
// CHECK-LABEL: sdg.graph @bf16
// CHECK: %[[X:.*]] = sdg.input "x" domain [i, t] : !tidal.tensor<[2], bf16>
// CHECK: %[[W:.*]] = sdg.cast %[[X]][i, t] domain [i, t] : (!tidal.tensor<[2], bf16>) -> !tidal.tensor<[2], f32>
// CHECK: %[[S:.*]] = sdg.merge %[[W]][i, 0] if <t eq 0>, %[[A:.*]][i, t] if <true> domain [i, t] : ({{.*}}) -> !tidal.tensor<[2], f32>
// CHECK: %[[A]] = sdg.binary add %[[S]][i, t - 1], %[[W]][i, t] domain [i, t]
// CHECK: %[[B:.*]] = sdg.cast %[[S]][i, T - 1] domain [i] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[2], bf16>
// CHECK: %[[M:.*]] = sdg.merge %[[X]][i, 0] if <t eq 0>, %{{.*}}[i, t] if <true> domain [i, t] : ({{.*}}) -> !tidal.tensor<[2], bf16>
// CHECK: sdg.output "s" %[[B]][i] domain [i]
// CHECK: sdg.output "m" %[[M]][i, T - 1] domain [i]
sdg.graph @bf16 dims [i < I, t < T] {
  %x = sdg.input "x" domain [i, t] : !tidal.tensor<[2], bf16>
  %s = sdg.reduce sum [0] %x[i, 0:T] domain [i] : (!tidal.tensor<[2], bf16>) -> !tidal.tensor<[2], bf16>
  %m = sdg.reduce max [0] %x[i, 0:T] domain [i] : (!tidal.tensor<[2], bf16>) -> !tidal.tensor<[2], bf16>
  sdg.output "s" %s[i] domain [i] : !tidal.tensor<[2], bf16>
  sdg.output "m" %m[i] domain [i] : !tidal.tensor<[2], bf16>
}
