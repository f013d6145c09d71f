// A fuzz finding (stop 35): statement domains cut by modulo conditions (a
// recurrence defined at t - 2 for even t only, read at t + 1 and t + 2) gave
// isl's AST builder divs it could not express ("input involves unknown divs",
// an internal error). The schedule now makes the domains' divs explicit first
// (GraphSchedule: compute_divs); the graph schedules and lowers to scf.
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-schedule,sdg-lower-to-scf)' | FileCheck %s
// CHECK: func.func @fuzz_run
// CHECK: scf.for
module {
  sdg.graph @fuzz dims [t < T] {
    %0 = sdg.input "x1" domain [t] : !tidal.tensor<[3], i32>
    %1 = sdg.merge %3[] if <t eq T - 1>, %5[t + 1] if <(t + 1) mod 2 eq 0 and t lt T - 1>, %6[t + 1] if <t lt T - 1> domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
    %2 = sdg.merge %3[] if <t eq T - 1>, %3[] if <t eq T - 2>, %5[t + 2] if <t mod 2 eq 0 and t lt T - 2>, %6[t + 2] if <t lt T - 2> domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>, !tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
    %3 = sdg.constant dense<5.000000e-01> : tensor<f32> domain [] : !tidal.tensor<[], f32>
    %4 = sdg.constant dense<2.000000e+00> : tensor<f32> domain [] : !tidal.tensor<[], f32>
    %5 = sdg.binary min %1[t], %4[] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
    %6 = sdg.island %1[t], %3[], %2[t] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32> {
    ^bb0(%arg0: !tidal.tensor<[], f32>, %arg1: !tidal.tensor<[], f32>, %arg2: !tidal.tensor<[], f32>):
      %39 = sdg.unary abs %arg0[t] domain [t] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
      %40 = sdg.binary add %39[t], %arg1[t] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
      %41 = sdg.unary reciprocal %40[t] domain [t] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
      %42 = sdg.binary mul %arg2[t], %41[t] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
      %43 = sdg.unary sin %42[t] domain [t] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
      sdg.yield %43 : !tidal.tensor<[], f32>
    }
    %7 = sdg.merge %8[] if <t eq 0>, %9[t] if <true> domain [t] : (!tidal.tensor<[3], f64>, !tidal.tensor<[3], f64>) -> !tidal.tensor<[3], f64>
    %8 = sdg.full 5.000000e-01 domain [] : !tidal.tensor<[3], f64>
    %9 = sdg.island %4[], %1[t], %7[t - 1] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>, !tidal.tensor<[3], f64>) -> !tidal.tensor<[3], f64> {
    ^bb0(%arg0: !tidal.tensor<[], f32>, %arg1: !tidal.tensor<[], f32>, %arg2: !tidal.tensor<[3], f64>):
      %39 = sdg.binary add %arg0[t], %arg1[t] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
      %40 = sdg.cast %39[t] domain [t] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[], f64>
      %41 = sdg.binary mul %arg2[t], %40[t] domain [t] : (!tidal.tensor<[3], f64>, !tidal.tensor<[], f64>) -> !tidal.tensor<[3], f64>
      %42 = sdg.unary tanh %41[t] domain [t] : (!tidal.tensor<[3], f64>) -> !tidal.tensor<[3], f64>
      sdg.yield %42 : !tidal.tensor<[3], f64>
    }
    %10 = sdg.scan cummax 0 reverse %0[0:T] domain [] : (!tidal.tensor<[3], i32>) -> !tidal.tensor<[T, 3], i32>
    %11 = sdg.take 0 at <t> %10[] domain [t] : (!tidal.tensor<[T, 3], i32>) -> !tidal.tensor<[3], i32>
    %12 = sdg.merge %15[] if <t eq T - 1>, %14[] if <t eq T - 2>, %18[t + 2] if <(t + 2) mod 3 eq 0 and t lt T - 2>, %19[t + 2] if <t lt T - 2> domain [t] : (!tidal.tensor<[2, 3], f32>, !tidal.tensor<[2, 3], f32>, !tidal.tensor<[2, 3], f32>, !tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[2, 3], f32>
    %13 = sdg.merge %14[] if <t eq T - 1>, %15[] if <t eq T - 2>, %14[] if <t eq T - 3>, %18[t + 3] if <t mod 3 eq 0 and t lt T - 3>, %19[t + 3] if <t lt T - 3> domain [t] : (!tidal.tensor<[2, 3], f32>, !tidal.tensor<[2, 3], f32>, !tidal.tensor<[2, 3], f32>, !tidal.tensor<[2, 3], f32>, !tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[2, 3], f32>
    %14 = sdg.full 5.000000e-01 domain [] : !tidal.tensor<[2, 3], f32>
    %15 = sdg.island %11[T - 2] domain [] : (!tidal.tensor<[3], i32>) -> !tidal.tensor<[2, 3], f32> {
    ^bb0(%arg0: !tidal.tensor<[3], i32>):
      %39 = sdg.cast %arg0[] domain [] : (!tidal.tensor<[3], i32>) -> !tidal.tensor<[3], f32>
      %40 = sdg.expand %39[] domain [] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[2, 3], f32>
      sdg.yield %40 : !tidal.tensor<[2, 3], f32>
    }
    %16 = sdg.param "W32" dense<[[4.500000e-01, 3.800000e-01, -0.00999999977], [3.300000e-01, -3.300000e-01, -9.100000e-01], [0.839999973, 2.400000e-01, -1.030000e+00]]> : tensor<3x3xf32> domain [] : !tidal.tensor<[3, 3], f32>
    %17 = sdg.constant dense<1.500000e+00> : tensor<f64> domain [] : !tidal.tensor<[], f64>
    %18 = sdg.island %7[t], %17[] domain [t] : (!tidal.tensor<[3], f64>, !tidal.tensor<[], f64>) -> !tidal.tensor<[2, 3], f32> {
    ^bb0(%arg0: !tidal.tensor<[3], f64>, %arg1: !tidal.tensor<[], f64>):
      %39 = sdg.binary mod %arg0[t], %arg1[t] domain [t] : (!tidal.tensor<[3], f64>, !tidal.tensor<[], f64>) -> !tidal.tensor<[3], f64>
      %40 = sdg.cast %39[t] domain [t] : (!tidal.tensor<[3], f64>) -> !tidal.tensor<[3], f32>
      %41 = sdg.expand %40[t] domain [t] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[2, 3], f32>
      sdg.yield %41 : !tidal.tensor<[2, 3], f32>
    }
    %19 = sdg.island %12[t], %13[t], %16[] domain [t] : (!tidal.tensor<[2, 3], f32>, !tidal.tensor<[2, 3], f32>, !tidal.tensor<[3, 3], f32>) -> !tidal.tensor<[2, 3], f32> {
    ^bb0(%arg0: !tidal.tensor<[2, 3], f32>, %arg1: !tidal.tensor<[2, 3], f32>, %arg2: !tidal.tensor<[3, 3], f32>):
      %39 = sdg.flip 1 %arg0[t] domain [t] : (!tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[2, 3], f32>
      %40 = sdg.matmul %arg1[t], %arg2[t] domain [t] : (!tidal.tensor<[2, 3], f32>, !tidal.tensor<[3, 3], f32>) -> !tidal.tensor<[2, 3], f32>
      %41 = sdg.binary sub %40[t], %39[t] domain [t] : (!tidal.tensor<[2, 3], f32>, !tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[2, 3], f32>
      %42 = sdg.unary sin %41[t] domain [t] : (!tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[2, 3], f32>
      sdg.yield %42 : !tidal.tensor<[2, 3], f32>
    }
    %20 = sdg.island  domain [t] : () -> !tidal.tensor<[], i32> {
      %39 = sdg.symbol_value <t> domain [t] : !tidal.tensor<[], i64>
      %40 = sdg.cast %39[t] domain [t] : (!tidal.tensor<[], i64>) -> !tidal.tensor<[], i32>
      sdg.yield %40 : !tidal.tensor<[], i32>
    }
    %21 = sdg.merge %3[] if <t eq T - 1>, %22[] if <t eq T - 2>, %25[t] if <true> domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
    %22 = sdg.cast %20[T - 2] domain [] : (!tidal.tensor<[], i32>) -> !tidal.tensor<[], f32>
    %23 = sdg.param "W84" dense<[[-0.76999998, -1.800000e-01, -1.180000e+00], [5.200000e-01, -6.100000e-01, -8.000000e-02], [3.200000e-01, 7.000000e-02, -4.300000e-01]]> : tensor<3x3xf32> domain [] : !tidal.tensor<[3, 3], f32>
    %24 = sdg.island %13[t + 1], %23[], %2[t], %21[t + 2] domain [t] : (!tidal.tensor<[2, 3], f32>, !tidal.tensor<[3, 3], f32>, !tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32> {
    ^bb0(%arg0: !tidal.tensor<[2, 3], f32>, %arg1: !tidal.tensor<[3, 3], f32>, %arg2: !tidal.tensor<[], f32>, %arg3: !tidal.tensor<[], f32>):
      %39 = sdg.matmul %arg0[t], %arg1[t] domain [t] : (!tidal.tensor<[2, 3], f32>, !tidal.tensor<[3, 3], f32>) -> !tidal.tensor<[2, 3], f32>
      %40 = sdg.binary mul %arg2[t], %39[t] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[2, 3], f32>
      %41 = sdg.reduce sum [0, 1] %40[t] domain [t] : (!tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[], f32>
      %42 = sdg.binary add %arg3[t], %41[t] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
      sdg.yield %42 : !tidal.tensor<[], f32>
    }
    %25 = sdg.unary sin %24[t] domain [t] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
    sdg.output "o0" %21[t] domain [t] : !tidal.tensor<[], f32>
    %26 = sdg.unary exp %2[0:T] domain [] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[T], f32>
    %27 = sdg.reduce sum [0] %26[] domain [] : (!tidal.tensor<[T], f32>) -> !tidal.tensor<[], f32>
    sdg.output "ow" %27[] domain [] : !tidal.tensor<[], f32>
    %28 = sdg.full 1.000000e+00 domain [] : !tidal.tensor<[], f32>
    %29 = sdg.merge %35[t] if <true> domain [t] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
    %30 = sdg.island %24[t], %29[t] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32> {
    ^bb0(%arg0: !tidal.tensor<[], f32>, %arg1: !tidal.tensor<[], f32>):
      %39 = sdg.unary cos %arg0[t] domain [t] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
      %40 = sdg.binary mul %arg1[t], %39[t] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
      sdg.yield %40 : !tidal.tensor<[], f32>
    }
    %31 = sdg.island %13[t + 1], %30[t], %2[t] domain [t] : (!tidal.tensor<[2, 3], f32>, !tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[3, 3], f32> {
    ^bb0(%arg0: !tidal.tensor<[2, 3], f32>, %arg1: !tidal.tensor<[], f32>, %arg2: !tidal.tensor<[], f32>):
      %39 = sdg.permute [1, 0] %arg0[t] domain [t] : (!tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[3, 2], f32>
      %40 = sdg.unsqueeze 0 %arg1[t] domain [t] : (!tidal.tensor<[], f32>) -> !tidal.tensor<[1], f32>
      %41 = sdg.unsqueeze 1 %40[t] domain [t] : (!tidal.tensor<[1], f32>) -> !tidal.tensor<[1, 1], f32>
      %42 = sdg.expand %41[t] domain [t] : (!tidal.tensor<[1, 1], f32>) -> !tidal.tensor<[2, 3], f32>
      %43 = sdg.binary mul %42[t], %arg2[t] domain [t] : (!tidal.tensor<[2, 3], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[2, 3], f32>
      %44 = sdg.matmul %39[t], %43[t] domain [t] : (!tidal.tensor<[3, 2], f32>, !tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[3, 3], f32>
      sdg.yield %44 : !tidal.tensor<[3, 3], f32>
    }
    %32 = sdg.merge %30[t] if <t ne T - 1 and t ne T - 2>, %33[] if <true> domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
    %33 = sdg.constant dense<0.000000e+00> : tensor<f32> domain [] : !tidal.tensor<[], f32>
    %34 = sdg.merge %30[t - 2] if <t ge 2>, %33[] if <true> domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
    %35 = sdg.binary add %28[], %34[t] domain [t] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
    %36 = sdg.merge %31[t] if <t ne T - 1 and t ne T - 2>, %37[] if <true> domain [t] : (!tidal.tensor<[3, 3], f32>, !tidal.tensor<[3, 3], f32>) -> !tidal.tensor<[3, 3], f32>
    %37 = sdg.full 0.000000e+00 domain [] : !tidal.tensor<[3, 3], f32>
    %38 = sdg.reduce sum [0] %36[0:T] domain [] : (!tidal.tensor<[3, 3], f32>) -> !tidal.tensor<[3, 3], f32>
    sdg.output "g0" %38[] domain [] : !tidal.tensor<[3, 3], f32>
  }
}

