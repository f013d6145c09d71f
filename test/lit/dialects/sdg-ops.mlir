// Round trip of every sdg op: custom form, then generic form, then through the
// mlir-opt dialect plugin. The graph region allows uses before definitions
// and cycles through merges.
// RUN: tidal-opt %s | tidal-opt | FileCheck %s
// RUN: tidal-opt %s --mlir-print-op-generic | tidal-opt | FileCheck %s
// RUN: mlir-opt --load-dialect-plugin=%tidal_plugin %s | FileCheck %s

!v4 = !tidal.tensor<[4], f32>
!m44 = !tidal.tensor<[4, 4], f32>

// CHECK-LABEL: sdg.graph @all_ops dims [i < I, t < T] {
sdg.graph @all_ops dims [i < I, t < T] {
  // CHECK: %[[X:.*]] = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %x = sdg.input "x" domain [t] : !v4
  // CHECK: %[[W:.*]] = sdg.param "W" dense<1.000000e+00> : tensor<4x4xf32> domain [] : !tidal.tensor<[4, 4], f32>
  %w = sdg.param "W" dense<1.0> : tensor<4x4xf32> domain [] : !m44
  // A recurrence: s[0] = x[0], s[t] = tanh(s[t - 1] @ W) + x[t] -- a cycle s -> mm -> u -> n -> s.
  // CHECK: %[[S:.*]] = sdg.merge %[[X]][0] if <t eq 0>, %[[N:.*]][t] if <true> domain [t]
  %s = sdg.merge %x[0] if <t eq 0>, %n[t] if <true> domain [t] : (!v4, !v4) -> !v4
  // CHECK: %[[MM:.*]] = sdg.matmul %[[S]][t - 1], %[[W]][] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4, 4], f32>) -> !tidal.tensor<[4], f32>
  %mm = sdg.matmul %s[t - 1], %w[] domain [t] : (!v4, !m44) -> !v4
  // CHECK: %[[U:.*]] = sdg.unary tanh %[[MM]][t] domain [t]
  %u = sdg.unary tanh %mm[t] domain [t] : (!v4) -> !v4
  // CHECK: %[[N]] = sdg.binary add %[[U]][t], %[[X]][t] domain [t]
  %n = sdg.binary add %u[t], %x[t] domain [t] : (!v4, !v4) -> !v4
  // CHECK: sdg.binary lt %[[X]][t], %[[U]][t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], i1>
  %b = sdg.binary lt %x[t], %u[t] domain [t] : (!v4, !v4) -> !tidal.tensor<[4], i1>
  // CHECK: sdg.where
  %sel = sdg.where %b[t], %x[t], %u[t] domain [t] : (!tidal.tensor<[4], i1>, !v4, !v4) -> !v4
  // Windows, suffixes, n-step lookahead, constant slices, several dims.
  // CHECK: sdg.reduce sum [0] %[[X]][max(0, t - 2):t + 1] domain [t]
  %win = sdg.reduce sum [0] %x[max(0, t - 2):t + 1] domain [t] : (!v4) -> !v4
  // CHECK: sdg.reduce max [0] keepdim %[[X]][t:min(t + 3, T)] domain [t]
  %ns = sdg.reduce max [0] keepdim %x[t:min(t + 3, T)] domain [t] : (!v4) -> !tidal.tensor<[1, 4], f32>
  // CHECK: sdg.scan cumsum 0 %[[X]][0:T] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[T, 4], f32>
  %cs = sdg.scan cumsum 0 %x[0:T] domain [] : (!v4) -> !tidal.tensor<[T, 4], f32>
  // CHECK: sdg.linear_scan 1 %[[X]][0:T], %{{.*}}[] domain [] : (!tidal.tensor<[4], f32>, !tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[T, 4], f32>
  %ls = sdg.linear_scan 1 %x[0:T], %cs[] domain [] : (!v4, !tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[T, 4], f32>
  // CHECK: sdg.take 0 at <t> %{{.*}}[] domain [t]
  %tk = sdg.take 0 at <t> %cs[] domain [t] : (!tidal.tensor<[T, 4], f32>) -> !v4
  // CHECK: sdg.unary exp %[[X]][t] domain [i, t]
  %e = sdg.unary exp %x[t] domain [i, t] : (!v4) -> !v4
  // CHECK: sdg.reduce sum [0, 1] %{{.*}}[0:I, 0:T] domain []
  %tot = sdg.reduce sum [0, 1] %e[0:I, 0:T] domain [] : (!v4) -> !v4
  // CHECK: sdg.reshape
  %rs = sdg.reshape %x[t] domain [t] : (!v4) -> !tidal.tensor<[2, 2], f32>
  // CHECK: sdg.permute [1, 0]
  %pm = sdg.permute [1, 0] %rs[t] domain [t] : (!tidal.tensor<[2, 2], f32>) -> !tidal.tensor<[2, 2], f32>
  // CHECK: sdg.unsqueeze 0
  %us = sdg.unsqueeze 0 %x[t] domain [t] : (!v4) -> !tidal.tensor<[1, 4], f32>
  // CHECK: sdg.expand
  %ex = sdg.expand %us[t] domain [t] : (!tidal.tensor<[1, 4], f32>) -> !tidal.tensor<[t + 1, 4], f32>
  // CHECK: sdg.squeeze 0
  %sq = sdg.squeeze 0 %us[t] domain [t] : (!tidal.tensor<[1, 4], f32>) -> !v4
  // CHECK: sdg.flip 0
  %fl = sdg.flip 0 %x[t] domain [t] : (!v4) -> !v4
  // CHECK: sdg.slice 0 at <t floordiv 2>
  %sl = sdg.slice 0 at <t floordiv 2> %x[t:T] domain [t] : (!v4) -> !tidal.tensor<[1, 4], f32>
  // CHECK: sdg.index_select 0
  %idx = sdg.constant dense<[1, 0]> : tensor<2xi64> domain [] : !tidal.tensor<[2], i64>
  %is = sdg.index_select 0 %w[], %idx[] domain [] : (!m44, !tidal.tensor<[2], i64>) -> !tidal.tensor<[2, 4], f32>
  // CHECK: sdg.gather 1
  %gi = sdg.constant dense<0> : tensor<4x1xi64> domain [] : !tidal.tensor<[4, 1], i64>
  %ga = sdg.gather 1 %w[], %gi[] domain [] : (!m44, !tidal.tensor<[4, 1], i64>) -> !tidal.tensor<[4, 1], f32>
  // CHECK: sdg.scatter_add 1
  %sa = sdg.scatter_add 1 %w[], %gi[], %ga[] domain [] : (!m44, !tidal.tensor<[4, 1], i64>, !tidal.tensor<[4, 1], f32>) -> !m44
  // CHECK: sdg.concat 0
  %cc = sdg.concat 0 %x[t], %u[t] domain [t] : (!v4, !v4) -> !tidal.tensor<[8], f32>
  // CHECK: sdg.pad 0 <0> <2 - min(t, 2)> value 0.000000e+00 %[[X]][max(0, t - 2):t + 1]
  %pd = sdg.pad 0 <0> <2 - min(t, 2)> value 0.0 %x[max(0, t - 2):t + 1] domain [t] : (!v4) -> !tidal.tensor<[3, 4], f32>
  // CHECK: sdg.cast
  %ct = sdg.cast %x[t] domain [t] : (!v4) -> !tidal.tensor<[4], f16>
  // CHECK: sdg.udf "env.step"(%{{.*}}[i, t - 1]) domain [i, t]
  %o, %r = sdg.udf "env.step"(%e[i, t - 1]) domain [i, t] : (!v4) -> (!v4, !tidal.tensor<[], f32>)
  // CHECK: sdg.full 0.000000e+00 domain [t] : !tidal.tensor<[T - t, 4], f32>
  %z = sdg.full 0.0 domain [t] : !tidal.tensor<[T - t, 4], f32>
  // CHECK: sdg.iota 0 domain [t] : !tidal.tensor<[t + 1], i64>
  %io = sdg.iota 0 domain [t] : !tidal.tensor<[t + 1], i64>
  // CHECK: sdg.random uniform seed 3 domain [i, t]
  %rn = sdg.random uniform seed 3 domain [i, t] : !v4
  // CHECK: sdg.symbol_value <i> domain [i]
  %iv = sdg.symbol_value <i> domain [i] : !tidal.tensor<[], i64>
  // A fused island: reads its operands at points, body ops at the identity.
  // CHECK: %[[IS:.*]]:2 = sdg.island %[[X]][t], %[[S]][t - 1] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> (!tidal.tensor<[4], f32>, !tidal.tensor<[], f32>) {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: !tidal.tensor<[4], f32>, %[[B:.*]]: !tidal.tensor<[4], f32>):
  // CHECK-NEXT: %[[SUM:.*]] = sdg.binary add %[[A]][t], %[[B]][t] domain [t]
  // CHECK-NEXT: %[[TH:.*]] = sdg.unary tanh %[[SUM]][t] domain [t]
  // CHECK-NEXT: %[[RED:.*]] = sdg.reduce sum [0] %[[TH]][t] domain [t]
  // CHECK-NEXT: sdg.yield %[[TH]], %[[RED]] : !tidal.tensor<[4], f32>, !tidal.tensor<[], f32>
  // CHECK-NEXT: }
  %isl:2 = sdg.island %x[t], %s[t - 1] domain [t] : (!v4, !v4) -> (!v4, !tidal.tensor<[], f32>) {
  ^bb0(%ia: !v4, %ib: !v4):
    %isum = sdg.binary add %ia[t], %ib[t] domain [t] : (!v4, !v4) -> !v4
    %ith = sdg.unary tanh %isum[t] domain [t] : (!v4) -> !v4
    %ired = sdg.reduce sum [0] %ith[t] domain [t] : (!v4) -> !tidal.tensor<[], f32>
    sdg.yield %ith, %ired : !v4, !tidal.tensor<[], f32>
  }
  // An island may read a unit-step slice: its block argument has the sliced type.
  // CHECK: %[[SL:.*]] = sdg.island %[[X]][0:t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32> {
  // CHECK-NEXT: ^bb0(%[[C:.*]]: !tidal.tensor<[t + 1, 4], f32>):
  // CHECK-NEXT: sdg.reduce sum [0] %[[C]][t] domain [t]
  %isl2 = sdg.island %x[0:t + 1] domain [t] : (!v4) -> !v4 {
  ^bb0(%ic: !tidal.tensor<[t + 1, 4], f32>):
    %icsum = sdg.reduce sum [0] %ic[t] domain [t] : (!tidal.tensor<[t + 1, 4], f32>) -> !v4
    sdg.yield %icsum : !v4
  }
  // CHECK: sdg.output "island_slice" %[[SL]][t] domain [t]
  sdg.output "island_slice" %isl2[t] domain [t] : !v4
  // CHECK: sdg.output "island" %[[IS]]#1[t] domain [t]
  sdg.output "island" %isl#1[t] domain [t] : !tidal.tensor<[], f32>
  // CHECK: sdg.output "s" %[[S]][t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "s" %s[t] domain [t] : !v4
  // CHECK: sdg.output "total" %{{.*}}[] domain [] : !tidal.tensor<[4], f32>
  sdg.output "total" %tot[] domain [] : !v4
}
