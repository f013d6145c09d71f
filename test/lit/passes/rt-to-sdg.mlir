// rt-to-sdg: one sdg op per rt operator, dependences from rt.index, one
// sdg.merge per rt.recurrent (docs/semantics.md). Every op it creates is
// needed by an output, so sdg-dce keeps them all, and every dependence passes
// sdg-verify-dependences.
// RUN: tidal-opt %s --split-input-file --pass-pipeline='builtin.module(rt-to-sdg)' | FileCheck %s
// RUN: tidal-opt %s --split-input-file --rt-to-sdg --sdg-dce | FileCheck %s
// RUN: tidal-opt %s --split-input-file --rt-to-sdg --sdg-verify-dependences | FileCheck %s

!v = !tidal.tensor<[4], f32>

// s[0] = x[0]; s[t + 1] = tanh(s[t]): a cycle through the merge.
// CHECK-LABEL: sdg.graph @recurrence dims [t < T] {
// CHECK-NEXT:    %[[X:.*]] = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
// CHECK-NEXT:    %[[S:.*]] = sdg.merge %[[X]][0] if <t eq 0>, %[[N:.*]][t - 1] if <t ge 1> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
// CHECK-NEXT:    %[[N]] = sdg.unary tanh %[[S]][t] domain [t]
// CHECK-NEXT:    sdg.output "s" %[[S]][t] domain [t] : !tidal.tensor<[4], f32>
// CHECK-NEXT:  }
// CHECK-NOT:   rt.
rt.program @recurrence dims [t < T] {
  %x = rt.input "x" domain [t] : !v
  %s = rt.recurrent domain [t] : !v
  %x0 = rt.index %x[0] domain [] : (!v) -> !v
  rt.define %s[0] = %x0 : !v, !v
  %n = rt.unary tanh %s domain [t] : (!v) -> !v
  rt.define %s[t + 1] = %n : !v, !v
  rt.output "s" %s : !v
}

// -----

!s = !tidal.tensor<[], f32>

// Discounted returns, backwards: v[T - 1] = r[T - 1]; v[t] = r[t] + 0.9 * v[t + 1].
// CHECK-LABEL: sdg.graph @returns dims [t < T] {
// CHECK-NEXT:    %[[R:.*]] = sdg.input "r" domain [t]
// CHECK-NEXT:    %[[G:.*]] = sdg.constant dense<0.899999976> : tensor<f32> domain []
// CHECK-NEXT:    %[[V:.*]] = sdg.merge %[[R]][T - 1] if <t eq T - 1>, %[[A:.*]][t] if <true> domain [t]
// CHECK-NEXT:    %[[M:.*]] = sdg.binary mul %[[G]][], %[[V]][t + 1] domain [t]
// CHECK-NEXT:    %[[A]] = sdg.binary add %[[R]][t], %[[M]][t] domain [t]
// CHECK-NEXT:    sdg.output "v" %[[V]][t] domain [t]
rt.program @returns dims [t < T] {
  %r = rt.input "r" domain [t] : !s
  %g = rt.constant dense<0.9> : tensor<f32> domain [] : !s
  %v = rt.recurrent domain [t] : !s
  %rl = rt.index %r[T - 1] domain [] : (!s) -> !s
  rt.define %v[T - 1] = %rl : !s, !s
  %vn = rt.index %v[t + 1] domain [t] : (!s) -> !s
  %m = rt.binary mul %g, %vn domain [t] : (!s, !s) -> !s
  %a = rt.binary add %r, %m domain [t] : (!s, !s) -> !s
  rt.define %v[t] = %a : !s, !s
  rt.output "v" %v : !s
}

// -----

!v = !tidal.tensor<[4], f32>

// Windows, prefixes, suffixes, n-step lookahead and constant indices become
// the operands' dependences; an index of a point index composes.
// CHECK-LABEL: sdg.graph @windows dims [t < T] {
// CHECK-NEXT:    %[[X:.*]] = sdg.input "x" domain [t]
// CHECK-NEXT:    %[[W:.*]] = sdg.reduce sum [0] %[[X]][max(0, t - 2):t + 1] domain [t]
// CHECK-NEXT:    %[[P:.*]] = sdg.scan cumsum 0 %[[X]][0:t + 1] domain [t]
// CHECK-NEXT:    %[[G:.*]] = sdg.reduce sum [0] %[[X]][t:T] domain [t]
// CHECK-NEXT:    %[[N:.*]] = sdg.reduce max [0] %[[X]][t:min(t + 3, T)] domain [t]
// CHECK-NEXT:    %[[A:.*]] = sdg.reduce sum [0] %[[X]][0:T] domain []
// CHECK-NEXT:    %[[F:.*]] = sdg.binary sub %[[X]][t], %[[X]][0] domain [t]
// CHECK-NEXT:    %[[E:.*]] = sdg.reduce sum [0] %[[X]][0:T:2] domain []
// CHECK-NEXT:    %[[C:.*]] = sdg.reduce sum [0] %[[X]][0:t] domain [t]
// CHECK-NEXT:    sdg.output "w" %[[W]][t] domain [t]
// CHECK-NEXT:    sdg.output "p" %[[P]][t] domain [t]
// CHECK-NEXT:    sdg.output "g" %[[G]][t] domain [t]
// CHECK-NEXT:    sdg.output "n" %[[N]][t] domain [t]
// CHECK-NEXT:    sdg.output "a" %[[A]][] domain []
// CHECK-NEXT:    sdg.output "f" %[[F]][t] domain [t]
// CHECK-NEXT:    sdg.output "e" %[[E]][] domain []
// CHECK-NEXT:    sdg.output "c" %[[C]][t] domain [t]
// CHECK-NEXT:    sdg.output "x1" %[[X]][1] domain []
rt.program @windows dims [t < T] {
  %x = rt.input "x" domain [t] : !v
  %win = rt.index %x[max(0, t - 2):t + 1] domain [t] : (!v) -> !tidal.tensor<[min(t, 2) + 1, 4], f32>
  %w = rt.reduce sum [0] %win domain [t] : (!tidal.tensor<[min(t, 2) + 1, 4], f32>) -> !v
  %pre = rt.index %x[0:t + 1] domain [t] : (!v) -> !tidal.tensor<[t + 1, 4], f32>
  %p = rt.scan cumsum 0 %pre domain [t] : (!tidal.tensor<[t + 1, 4], f32>) -> !tidal.tensor<[t + 1, 4], f32>
  %suf = rt.index %x[t:T] domain [t] : (!v) -> !tidal.tensor<[T - t, 4], f32>
  %g = rt.reduce sum [0] %suf domain [t] : (!tidal.tensor<[T - t, 4], f32>) -> !v
  %ns = rt.index %x[t:min(t + 3, T)] domain [t] : (!v) -> !tidal.tensor<[min(t + 3, T) - t, 4], f32>
  %n = rt.reduce max [0] %ns domain [t] : (!tidal.tensor<[min(t + 3, T) - t, 4], f32>) -> !v
  %all = rt.index %x[0:T] domain [] : (!v) -> !tidal.tensor<[T, 4], f32>
  %a = rt.reduce sum [0] %all domain [] : (!tidal.tensor<[T, 4], f32>) -> !v
  %x0 = rt.index %x[0] domain [] : (!v) -> !v
  %f = rt.binary sub %x, %x0 domain [t] : (!v, !v) -> !v
  %even = rt.index %x[0:T:2] domain [] : (!v) -> !tidal.tensor<[(T + 1) floordiv 2, 4], f32>
  %e = rt.reduce sum [0] %even domain [] : (!tidal.tensor<[(T + 1) floordiv 2, 4], f32>) -> !v
  // x[t - 1] read over [1:t + 1] is x[0:t]; read at [2] it is x[1]: both compose.
  %prev = rt.index %x[t - 1] domain [t] : (!v) -> !v
  %pw = rt.index %prev[1:t + 1] domain [t] : (!v) -> !tidal.tensor<[t, 4], f32>
  %c = rt.reduce sum [0] %pw domain [t] : (!tidal.tensor<[t, 4], f32>) -> !v
  %one = rt.index %prev[2] domain [] : (!v) -> !v
  rt.output "w" %w : !v
  rt.output "p" %p : !tidal.tensor<[t + 1, 4], f32>
  rt.output "g" %g : !v
  rt.output "n" %n : !v
  rt.output "a" %a : !v
  rt.output "f" %f : !v
  rt.output "e" %e : !v
  rt.output "c" %c : !v
  rt.output "x1" %one : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// An index of a slice index cannot compose: the inner one is materialised as
// an sdg.reshape to its result type.
// CHECK-LABEL: sdg.graph @materialise dims [t < T] {
// CHECK-NEXT:    %[[X:.*]] = sdg.input "x" domain [t]
// CHECK-NEXT:    %[[M:.*]] = sdg.reshape %[[X]][0:t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[t + 1, 4], f32>
// CHECK-NEXT:    sdg.output "prev" %[[M]][t - 1] domain [t] : !tidal.tensor<[t + 1, 4], f32>
rt.program @materialise dims [t < T] {
  %x = rt.input "x" domain [t] : !v
  %pre = rt.index %x[0:t + 1] domain [t] : (!v) -> !tidal.tensor<[t + 1, 4], f32>
  %prev = rt.index %pre[t - 1] domain [t] : (!tidal.tensor<[t + 1, 4], f32>) -> !tidal.tensor<[t + 1, 4], f32>
  rt.output "prev" %prev : !tidal.tensor<[t + 1, 4], f32>
}

// -----

!w = !tidal.tensor<[3], f32>

// Two dims: weights updated once per iteration i from the gradients of all
// timesteps t of that iteration; the learning rate decays with i.
// w[0] = w0; w[i + 1] = w[i] - lr[i] * sum(g[i, 0:T]), g[i, t] = w[i] * x[i, t].
// CHECK-LABEL: sdg.graph @sgd dims [i < I, t < T] {
// CHECK-NEXT:    %[[X:.*]] = sdg.input "x" domain [i, t]
// CHECK-NEXT:    %[[W0:.*]] = sdg.param "w0" dense<1.000000e+00> : tensor<3xf32> domain []
// CHECK-NEXT:    %[[W:.*]] = sdg.merge %[[W0]][] if <i eq 0>, %[[U:.*]][i - 1] if <i ge 1> domain [i]
// CHECK-NEXT:    %[[G:.*]] = sdg.binary mul %[[W]][i], %[[X]][i, t] domain [i, t]
// CHECK-NEXT:    %[[S:.*]] = sdg.reduce sum [0] %[[G]][i, 0:T] domain [i]
// CHECK-NEXT:    %[[IV:.*]] = sdg.symbol_value <i> domain [i]
// CHECK-NEXT:    %[[IF:.*]] = sdg.cast %[[IV]][i] domain [i]
// CHECK-NEXT:    %[[K:.*]] = sdg.constant
// CHECK-NEXT:    %[[LR:.*]] = sdg.binary pow %[[K]][], %[[IF]][i] domain [i]
// CHECK-NEXT:    %[[D:.*]] = sdg.binary mul %[[LR]][i], %[[S]][i] domain [i]
// CHECK-NEXT:    %[[U]] = sdg.binary sub %[[W]][i], %[[D]][i] domain [i]
// CHECK-NEXT:    sdg.output "w" %[[W]][i] domain [i]
// CHECK-NEXT:    sdg.output "g" %[[G]][i, t] domain [i, t]
rt.program @sgd dims [i < I, t < T] {
  %x = rt.input "x" domain [i, t] : !w
  %w0 = rt.param "w0" dense<1.0> : tensor<3xf32> domain [] : !w
  %w = rt.recurrent domain [i] : !w
  rt.define %w[0] = %w0 : !w, !w
  %g = rt.binary mul %w, %x domain [i, t] : (!w, !w) -> !w
  %gs = rt.index %g[i, 0:T] domain [i] : (!w) -> !tidal.tensor<[T, 3], f32>
  %s = rt.reduce sum [0] %gs domain [i] : (!tidal.tensor<[T, 3], f32>) -> !w
  %iv = rt.symbol_value <i> domain [i] : !tidal.tensor<[], i64>
  %ivf = rt.cast %iv domain [i] : (!tidal.tensor<[], i64>) -> !tidal.tensor<[], f32>
  %k = rt.constant dense<0.5> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %lr = rt.binary pow %k, %ivf domain [i] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
  %d = rt.binary mul %lr, %s domain [i] : (!tidal.tensor<[], f32>, !w) -> !w
  %u = rt.binary sub %w, %d domain [i] : (!w, !w) -> !w
  rt.define %w[i + 1] = %u : !w, !w
  rt.output "w" %w : !w
  rt.output "g" %g : !w
}

// -----

!s = !tidal.tensor<[], f32>

// Conditional cases are tried in order: the condition is rewritten in the
// target's coordinates, together with "the target is in the case's image".
// CHECK-LABEL: sdg.graph @conditional dims [t < T] {
// CHECK:         sdg.merge %{{.*}}[] if <t eq 0>, %{{.*}}[] if <t mod 5 eq 0>, %{{.*}}[t - 1] if <(t + 2) mod 3 eq 0 and t ge 1>, %{{.*}}[t - 1] if <t ge 1> domain [t]
// CHECK:         sdg.output "c" %{{.*}}[t] domain [t] {cond = #tidal.expr<t mod 2 eq 1>}
rt.program @conditional dims [t < T] {
  %z = rt.constant dense<0.0> : tensor<f32> domain [] : !s
  %one = rt.constant dense<1.0> : tensor<f32> domain [] : !s
  %c = rt.recurrent domain [t] : !s
  rt.define %c[0] = %z : !s, !s
  rt.define %c[t] if <t mod 5 eq 0> = %z : !s, !s
  %inc = rt.binary add %c, %one domain [t] : (!s, !s) -> !s
  %dbl = rt.binary add %c, %c domain [t] : (!s, !s) -> !s
  rt.define %c[t + 1] if <t mod 3 eq 0> = %dbl : !s, !s
  rt.define %c[t + 1] = %inc : !s, !s
  rt.output "c" %c if <t mod 2 eq 1> : !s
}

// -----

!o = !tidal.tensor<[2], f32>
!r = !tidal.tensor<[], f32>

// A UDF (an environment step) keeps its results, callee and domain; the
// observation is a recurrence over t inside every episode b.
// CHECK-LABEL: sdg.graph @env dims [b < B, t < T] {
// CHECK-NEXT:    %[[O0:.*]] = sdg.udf "env.reset"() domain [b] : () -> !tidal.tensor<[2], f32>
// CHECK-NEXT:    %[[O:.*]] = sdg.merge %[[O0]][b] if <t eq 0>, %[[STEP:.*]]#0[b, t - 1] if <t ge 1> domain [b, t]
// CHECK-NEXT:    %[[STEP]]:2 = sdg.udf "env.step"(%[[O]][b, t]) domain [b, t] : (!tidal.tensor<[2], f32>) -> (!tidal.tensor<[2], f32>, !tidal.tensor<[], f32>)
// CHECK-NEXT:    sdg.output "obs" %[[O]][b, t] domain [b, t]
// CHECK-NEXT:    sdg.output "reward" %[[STEP]]#1[b, t] domain [b, t]
rt.program @env dims [b < B, t < T] {
  %o0 = rt.udf "env.reset"() domain [b] : () -> !o
  %o = rt.recurrent domain [b, t] : !o
  rt.define %o[b, 0] = %o0 : !o, !o
  %next, %r = rt.udf "env.step"(%o) domain [b, t] : (!o) -> (!o, !r)
  rt.define %o[b, t + 1] = %next : !o, !o
  rt.output "obs" %o : !o
  rt.output "reward" %r : !r
}

// -----

!v = !tidal.tensor<[4], f32>

// Source ops keep their attributes and get no dependences.
// CHECK-LABEL: sdg.graph @sources dims [t < T] {
// CHECK-NEXT:    sdg.full 0.000000e+00 domain [t] : !tidal.tensor<[T - t, 4], f32>
// CHECK-NEXT:    sdg.iota 0 domain [t] : !tidal.tensor<[t + 1], i64>
// CHECK-NEXT:    sdg.random normal seed 7 domain [t] : !tidal.tensor<[4], f32>
// CHECK-NEXT:    sdg.output "z"
rt.program @sources dims [t < T] {
  %z = rt.full 0.0 domain [t] : !tidal.tensor<[T - t, 4], f32>
  %io = rt.iota 0 domain [t] : !tidal.tensor<[t + 1], i64>
  %rn = rt.random normal seed 7 domain [t] : !v
  rt.output "z" %z : !tidal.tensor<[T - t, 4], f32>
  rt.output "io" %io : !tidal.tensor<[t + 1], i64>
  rt.output "rn" %rn : !v
}
