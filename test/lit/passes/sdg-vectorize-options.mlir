// sdg-vectorize{dims=...}: only the named steps are vectorized; an unknown step
// is an error at the graph.
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-vectorize{dims=i})' | FileCheck %s --check-prefix=ONLYI
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-vectorize{dims=t})' | FileCheck %s --check-prefix=ONLYT
// RUN: not tidal-opt %s --pass-pipeline='builtin.module(sdg-vectorize{dims=k})' 2>&1 | FileCheck %s --check-prefix=BAD
// max-block-bytes: the batched matmul would be a [T, 4, 2] block, 2 KiB at
// T = 64 (the outer products of a weight gradient over a large input are
// T x in x out): at 2048 it stays per step (its sum can then be carried along
// t, sdg-accumulate); at 2049, or 0 (no limit), it is batched.
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-vectorize{max-block-bytes=2048 assume-bound=64})' | FileCheck %s --check-prefix=BIG
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-vectorize{max-block-bytes=2049 assume-bound=64})' | FileCheck %s --check-prefix=ONLYT
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-vectorize{max-block-bytes=0 assume-bound=64})' | FileCheck %s --check-prefix=ONLYT

// Over i nothing qualifies (the sum reads one i at a time); over t the matmul does.
// ONLYI: sdg.matmul %{{.*}}[i, t], %{{.*}}[i, t] domain [i, t]
// ONLYT: sdg.matmul %{{.*}}[i, 0:T], %{{.*}}[i, 0:T] domain [i] : {{.*}} -> !tidal.tensor<[T, 4, 2], f32>
// BIG: sdg.matmul %{{.*}}[i, t], %{{.*}}[i, t] domain [i, t]
// BIG: sdg.reduce sum [0] %{{.*}}[i, 0:T] domain [i]
// BAD: error: sdg-vectorize: no step k in @gradient (steps: i, t)
sdg.graph @gradient dims [i < I, t < T] {
  %h = sdg.input "h" domain [i, t] : !tidal.tensor<[4, 1], f32>
  %g = sdg.input "g" domain [i, t] : !tidal.tensor<[1, 2], f32>
  %o = sdg.matmul %h[i, t], %g[i, t] domain [i, t] : (!tidal.tensor<[4, 1], f32>, !tidal.tensor<[1, 2], f32>) -> !tidal.tensor<[4, 2], f32>
  %s = sdg.reduce sum [0] %o[i, 0:T] domain [i] : (!tidal.tensor<[4, 2], f32>) -> !tidal.tensor<[4, 2], f32>
  sdg.output "s" %s[i] domain [i] : !tidal.tensor<[4, 2], f32>
}
