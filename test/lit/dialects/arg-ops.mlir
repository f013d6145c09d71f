// Round trip of the position-valued ops (reduce argmax/argmin, argsort) in rt and sdg:
// custom form, then generic form, then through the mlir-opt dialect plugin.
// RUN: tidal-opt %s | tidal-opt | FileCheck %s
// RUN: tidal-opt %s --mlir-print-op-generic | tidal-opt | FileCheck %s
// RUN: mlir-opt --load-dialect-plugin=%tidal_plugin %s | FileCheck %s

// CHECK-LABEL: rt.program @arg_rt dims [t < T] {
rt.program @arg_rt dims [t < T] {
  // CHECK: %[[X:.*]] = rt.input "x" domain [t] : !tidal.tensor<[4], f32>
  %x = rt.input "x" domain [t] : !tidal.tensor<[4], f32>
  // CHECK: %[[W:.*]] = rt.index %[[X]][max(0, t - 2):t + 1] domain [t]
  %w = rt.index %x[max(0, t - 2):t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[min(t, 2) + 1, 4], f32>
  // CHECK: rt.reduce argmax [0] %[[W]] domain [t] : (!tidal.tensor<[min(t, 2) + 1, 4], f32>) -> !tidal.tensor<[4], i64>
  %a = rt.reduce argmax [0] %w domain [t] : (!tidal.tensor<[min(t, 2) + 1, 4], f32>) -> !tidal.tensor<[4], i64>
  // CHECK: rt.reduce argmin [1] keepdim %[[W]] domain [t] : (!tidal.tensor<[min(t, 2) + 1, 4], f32>) -> !tidal.tensor<[min(t, 2) + 1, 1], i64>
  %b = rt.reduce argmin [1] keepdim %w domain [t] : (!tidal.tensor<[min(t, 2) + 1, 4], f32>) -> !tidal.tensor<[min(t, 2) + 1, 1], i64>
  // CHECK: rt.argsort 0 %[[X]] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], i64>
  %s = rt.argsort 0 %x domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], i64>
  // CHECK: rt.argsort 1 descending %[[W]] domain [t] : (!tidal.tensor<[min(t, 2) + 1, 4], f32>) -> !tidal.tensor<[min(t, 2) + 1, 4], i64>
  %d = rt.argsort 1 descending %w domain [t] : (!tidal.tensor<[min(t, 2) + 1, 4], f32>) -> !tidal.tensor<[min(t, 2) + 1, 4], i64>
  rt.output "a" %a : !tidal.tensor<[4], i64>
  rt.output "s" %s : !tidal.tensor<[4], i64>
  rt.output "d" %d : !tidal.tensor<[min(t, 2) + 1, 4], i64>
  rt.output "b" %b : !tidal.tensor<[min(t, 2) + 1, 1], i64>
}

// CHECK-LABEL: sdg.graph @arg_sdg dims [t < T] {
sdg.graph @arg_sdg dims [t < T] {
  // CHECK: %[[X:.*]] = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  // CHECK: sdg.reduce argmax [0] %[[X]][max(0, t - 2):t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], i64>
  %a = sdg.reduce argmax [0] %x[max(0, t - 2):t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], i64>
  // CHECK: sdg.reduce argmin [0] keepdim %[[X]][t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[1], i64>
  %b = sdg.reduce argmin [0] keepdim %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[1], i64>
  // CHECK: sdg.argsort 1 descending %[[X]][0:t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[t + 1, 4], i64>
  %d = sdg.argsort 1 descending %x[0:t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[t + 1, 4], i64>
  // CHECK: sdg.argsort 0 %[[X]][t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], i64>
  %s = sdg.argsort 0 %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], i64>
  sdg.output "a" %a[t] domain [t] : !tidal.tensor<[4], i64>
  sdg.output "d" %d[t] domain [t] : !tidal.tensor<[t + 1, 4], i64>
  sdg.output "s" %s[t] domain [t] : !tidal.tensor<[4], i64>
  sdg.output "b" %b[t] domain [t] : !tidal.tensor<[1], i64>
}
