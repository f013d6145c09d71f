// sdg-lift{dims=...}: only windows over the named steps are lifted; an unknown
// step is an error at the graph.
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-lift{dims=i})' | FileCheck %s --check-prefix=ONLYI
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-lift{dims=t})' | FileCheck %s --check-prefix=ONLYT
// RUN: not tidal-opt %s --pass-pipeline='builtin.module(sdg-lift{dims=k})' 2>&1 | FileCheck %s --check-prefix=BAD

// ONLYI: sdg.reduce sum [0] %{{.*}}[i, 0:t + 1] domain [i, t]
// ONLYT: sdg.scan cumsum 0 %{{.*}}[i, 0:T] domain [i]
// ONLYT: sdg.take 0 at <t> %{{.*}}[i] domain [i, t]
// BAD: error: sdg-lift: no step k in @running (steps: i, t)
sdg.graph @running dims [i < I, t < T] {
  %x = sdg.input "x" domain [i, t] : !tidal.tensor<[4], f32>
  %y = sdg.reduce sum [0] %x[i, 0:t + 1] domain [i, t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "y" %y[i, t] domain [i, t] : !tidal.tensor<[4], f32>
}
