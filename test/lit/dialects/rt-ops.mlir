// Round trip of every rt op: custom form, then generic form, then through the
// mlir-opt dialect plugin.
// RUN: tidal-opt %s | tidal-opt | FileCheck %s
// RUN: tidal-opt %s --mlir-print-op-generic | tidal-opt | FileCheck %s
// RUN: mlir-opt --load-dialect-plugin=%tidal_plugin %s | FileCheck %s

// CHECK-LABEL: rt.program @all_ops dims [i < I, t < T] {
rt.program @all_ops dims [i < I, t < T] {
  // CHECK: %[[X:.*]] = rt.input "x" domain [t] : !tidal.tensor<[4], f32>
  %x = rt.input "x" domain [t] : !tidal.tensor<[4], f32>
  // CHECK: %[[W:.*]] = rt.param "W" dense<1.000000e+00> : tensor<4x4xf32> domain [] : !tidal.tensor<[4, 4], f32>
  %w = rt.param "W" dense<1.0> : tensor<4x4xf32> domain [] : !tidal.tensor<[4, 4], f32>
  // A parameter bound at run time: a name, a static shape, no values in the IR.
  // CHECK: rt.param "B" domain [] : !tidal.tensor<[4], f32>
  %wb = rt.param "B" domain [] : !tidal.tensor<[4], f32>
  // CHECK: %[[S:.*]] = rt.recurrent domain [t] : !tidal.tensor<[4], f32>
  %s = rt.recurrent domain [t] : !tidal.tensor<[4], f32>
  // CHECK: %[[X0:.*]] = rt.index %[[X]][0] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %x0 = rt.index %x[0] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  // CHECK: rt.define %[[S]][0] = %[[X0]] : !tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>
  rt.define %s[0] = %x0 : !tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>
  // CHECK: %[[XN:.*]] = rt.index %[[X]][t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %xn = rt.index %x[t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  // CHECK: rt.define %[[S]][t + 1] if <t mod 5 eq 0 and t gt 0> = %[[XN]]
  rt.define %s[t + 1] if <t mod 5 eq 0 and t gt 0> = %xn : !tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>
  // CHECK: rt.define %[[S]][t + 1] = %[[XN]]
  rt.define %s[t + 1] = %xn : !tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>
  // CHECK: rt.index %[[X]][max(0, t - 2):t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[min(t, 2) + 1, 4], f32>
  %win = rt.index %x[max(0, t - 2):t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[min(t, 2) + 1, 4], f32>
  // CHECK: rt.index %[[X]][t:min(t + 3, T)] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[min(t + 3, T) - t, 4], f32>
  %nstep = rt.index %x[t:min(t + 3, T)] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[min(t + 3, T) - t, 4], f32>
  // CHECK: rt.index %[[X]][0:T:2] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[(T + 1) floordiv 2, 4], f32>
  %even = rt.index %x[0:T:2] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[(T + 1) floordiv 2, 4], f32>
  // CHECK: %[[SUF:.*]] = rt.index %[[X]][t:T] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[T - t, 4], f32>
  %suf = rt.index %x[t:T] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[T - t, 4], f32>
  // CHECK: rt.unary tanh %[[X]] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %u = rt.unary tanh %x domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  // CHECK: rt.unary not
  %b = rt.binary gt %x, %u domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], i1>
  %nb = rt.unary not %b domain [t] : (!tidal.tensor<[4], i1>) -> !tidal.tensor<[4], i1>
  // CHECK: rt.binary add %[[X]], %{{.*}} domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[4], f32>
  %c = rt.constant dense<5.000000e-01> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %add = rt.binary add %x, %c domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[4], f32>
  // CHECK: rt.binary and
  %and = rt.binary and %b, %nb domain [t] : (!tidal.tensor<[4], i1>, !tidal.tensor<[4], i1>) -> !tidal.tensor<[4], i1>
  // CHECK: rt.where
  %sel = rt.where %and, %x, %u domain [t] : (!tidal.tensor<[4], i1>, !tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  // CHECK: rt.reduce sum [0] %[[SUF]] domain [t] : (!tidal.tensor<[T - t, 4], f32>) -> !tidal.tensor<[4], f32>
  %g = rt.reduce sum [0] %suf domain [t] : (!tidal.tensor<[T - t, 4], f32>) -> !tidal.tensor<[4], f32>
  // CHECK: rt.reduce max [0, 1] keepdim
  %m = rt.reduce max [0, 1] keepdim %suf domain [t] : (!tidal.tensor<[T - t, 4], f32>) -> !tidal.tensor<[1, 1], f32>
  // CHECK: rt.scan cumsum 0 reverse
  %cs = rt.scan cumsum 0 reverse %suf domain [t] : (!tidal.tensor<[T - t, 4], f32>) -> !tidal.tensor<[T - t, 4], f32>
  // CHECK: rt.linear_scan 0 reverse %{{.*}}, %{{.*}} domain [t] : (!tidal.tensor<[T - t, 4], f32>, !tidal.tensor<[T - t, 4], f32>) -> !tidal.tensor<[T - t, 4], f32>
  %ls = rt.linear_scan 0 reverse %suf, %suf domain [t] : (!tidal.tensor<[T - t, 4], f32>, !tidal.tensor<[T - t, 4], f32>) -> !tidal.tensor<[T - t, 4], f32>
  // CHECK: rt.matmul %[[X]], %[[W]] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4, 4], f32>) -> !tidal.tensor<[4], f32>
  %mm = rt.matmul %x, %w domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4, 4], f32>) -> !tidal.tensor<[4], f32>
  // CHECK: rt.reshape
  %rs = rt.reshape %x domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[2, 2], f32>
  // CHECK: rt.permute [1, 0]
  %pm = rt.permute [1, 0] %suf domain [t] : (!tidal.tensor<[T - t, 4], f32>) -> !tidal.tensor<[4, T - t], f32>
  // CHECK: rt.unsqueeze 0
  %us = rt.unsqueeze 0 %x domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[1, 4], f32>
  // CHECK: rt.expand
  %ex = rt.expand %us domain [t] : (!tidal.tensor<[1, 4], f32>) -> !tidal.tensor<[t + 1, 4], f32>
  // CHECK: rt.squeeze 0
  %sq = rt.squeeze 0 %us domain [t] : (!tidal.tensor<[1, 4], f32>) -> !tidal.tensor<[4], f32>
  // CHECK: rt.flip 0
  %fl = rt.flip 0 %x domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  // CHECK: rt.slice 0 at <t floordiv 2>
  %sl = rt.slice 0 at <t floordiv 2> %suf domain [t] : (!tidal.tensor<[T - t, 4], f32>) -> !tidal.tensor<[1, 4], f32>
  // CHECK: rt.take 0 at <t>
  %cum = rt.scan cumsum 0 %x domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %tk = rt.take 0 at <t> %ex domain [t] : (!tidal.tensor<[t + 1, 4], f32>) -> !tidal.tensor<[4], f32>
  // CHECK: rt.index_select 0
  %idx = rt.constant dense<[1, 0]> : tensor<2xi64> domain [] : !tidal.tensor<[2], i64>
  %is = rt.index_select 0 %w, %idx domain [] : (!tidal.tensor<[4, 4], f32>, !tidal.tensor<[2], i64>) -> !tidal.tensor<[2, 4], f32>
  // CHECK: rt.gather 1
  %gi = rt.constant dense<0> : tensor<4x1xi64> domain [] : !tidal.tensor<[4, 1], i64>
  %ga = rt.gather 1 %w, %gi domain [] : (!tidal.tensor<[4, 4], f32>, !tidal.tensor<[4, 1], i64>) -> !tidal.tensor<[4, 1], f32>
  // CHECK: rt.scatter_add 1
  %sa = rt.scatter_add 1 %w, %gi, %ga domain [] : (!tidal.tensor<[4, 4], f32>, !tidal.tensor<[4, 1], i64>, !tidal.tensor<[4, 1], f32>) -> !tidal.tensor<[4, 4], f32>
  // CHECK: rt.concat 0
  %cc = rt.concat 0 %x, %u domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[8], f32>
  // CHECK: rt.pad 0 <0> <2 - min(t, 2)> value 0.000000e+00
  %pd = rt.pad 0 <0> <2 - min(t, 2)> value 0.0 %win domain [t] : (!tidal.tensor<[min(t, 2) + 1, 4], f32>) -> !tidal.tensor<[3, 4], f32>
  // CHECK: rt.cast
  %ct = rt.cast %x domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f16>
  // CHECK: rt.udf "env.step"(%{{.*}}) domain [i, t] : (!tidal.tensor<[4], f32>) -> (!tidal.tensor<[4], f32>, !tidal.tensor<[], f32>)
  %o, %r = rt.udf "env.step"(%x) domain [i, t] : (!tidal.tensor<[4], f32>) -> (!tidal.tensor<[4], f32>, !tidal.tensor<[], f32>)
  // CHECK: rt.full 0.000000e+00 domain [t] : !tidal.tensor<[T - t, 4], f32>
  %z = rt.full 0.0 domain [t] : !tidal.tensor<[T - t, 4], f32>
  // CHECK: rt.iota 0 domain [t] : !tidal.tensor<[t + 1], i64>
  %io = rt.iota 0 domain [t] : !tidal.tensor<[t + 1], i64>
  // CHECK: rt.random normal seed 7 domain [i, t] : !tidal.tensor<[4], f32>
  %rn = rt.random normal seed 7 domain [i, t] : !tidal.tensor<[4], f32>
  // CHECK: rt.symbol_value <i> domain [i] : !tidal.tensor<[], i64>
  %iv = rt.symbol_value <i> domain [i] : !tidal.tensor<[], i64>
  // CHECK: rt.output "s" %[[S]] : !tidal.tensor<[4], f32>
  rt.output "s" %s : !tidal.tensor<[4], f32>
  // CHECK: rt.output "g" %{{.*}} if <t mod 5 eq 0> : !tidal.tensor<[4], f32>
  rt.output "g" %g if <t mod 5 eq 0> : !tidal.tensor<[4], f32>
}
