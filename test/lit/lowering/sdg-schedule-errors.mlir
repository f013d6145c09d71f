// Unschedulable graphs fail sdg-schedule with an error at the operator at
// fault, naming the operators, their dependence expressions and locations.
// RUN: tidal-opt %s --load-pass-plugin=tidal.lowering.passes --split-input-file --verify-diagnostics --sdg-schedule
// RUN: not tidal-opt %s --load-pass-plugin=tidal.lowering.passes --split-input-file --sdg-schedule 2>&1 | FileCheck %s

!v = !tidal.tensor<[4], f32>

// A recurrence that reads the future with a base case at t = 0: s[t] needs
// s[t + 1], ..., s[T], which does not exist.
// CHECK: error: cannot schedule @future: 'sdg.output "s"' at {{.*}}sdg-schedule-errors.mlir:{{[0-9]+}}:3 needs values that can never be computed (e.g. with T = 2):
// CHECK: '%1 = sdg.merge' at {{.*}}:{{[0-9]+}}:8 at t = 1: branch 1 (if <true>) reads %2[t]
// CHECK-NEXT: '%2 = sdg.unary tanh' at {{.*}}:{{[0-9]+}}:8 at t = 1: reads %1[t + 1], which includes t = 2 outside the domain of '%1 = sdg.merge'
// CHECK-NEXT: never reaches a base case
sdg.graph @future dims [t < T] {
  %a = sdg.input "a" domain [] : !v
  %s = sdg.merge %a[] if <t eq 0>, %f[t] if <true> domain [t] : (!v, !v) -> !v
  // expected-error @+1 {{reads %1[t + 1], which includes t = 2 outside the domain}}
  %f = sdg.unary tanh %s[t + 1] domain [t] : (!v) -> !v
  sdg.output "s" %s[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// A genuine cycle: s[T - 1] needs g, which needs s[0], which needs s[1], ...
// CHECK: error: cannot schedule @cycle: its dependences form a cycle in which an operator instance must run before itself
// CHECK-DAG: '%0 = sdg.merge' at {{.*}}:{{[0-9]+}}:8 reads %2[] (branch if <t eq T - 1>)
// CHECK-DAG: '%1 = sdg.unary tanh' at {{.*}}:{{[0-9]+}}:8 reads %0[t + 1]
// CHECK-DAG: '%2 = sdg.unary exp' at {{.*}}:{{[0-9]+}}:8 reads %0[0]
sdg.graph @cycle dims [t < T] {
  %s = sdg.merge %g[] if <t eq T - 1>, %f[t] if <true> domain [t] : (!v, !v) -> !v
  %f = sdg.unary tanh %s[t + 1] domain [t] : (!v) -> !v
  // expected-error @+1 {{its dependences form a cycle}}
  %g = sdg.unary exp %s[0] domain [] : (!v) -> !v
  sdg.output "s" %s[t] domain [t] : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// A read before the start of the domain, with no merge to guard it.
// CHECK: error: cannot schedule @outside: 'sdg.output "y"'
// CHECK: reads %0[t - 1], which includes t = -1 outside the domain of '%0 = sdg.input "x"'
sdg.graph @outside dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  // expected-error @+1 {{reads %0[t - 1], which includes t = -1 outside the domain}}
  %y = sdg.unary neg %x[t - 1] domain [t] : (!v) -> !v
  sdg.output "y" %y[t] domain [t] : !v
}

// -----

!f = !tidal.tensor<[], f32>
!b = !tidal.tensor<[], i1>

// A stop condition that reads T (a suffix sum r[t:T]) cannot be known before the stop.
// CHECK: error: the condition of sdg.stop_when at {{.*}}sdg-schedule-errors.mlir:{{[0-9]+}}:3 depends on the bound T, which is known only when the run stops
sdg.graph @stop_reads_bound dims [t < T] {
  %r = sdg.input "r" domain [t] : !f
  // expected-error @+1 {{depends on the bound T, which is known only when the run stops (through '%1 = sdg.reduce sum'}}
  %g = sdg.reduce sum [0] %r[t:T] domain [t] : (!f) -> !f
  %z = sdg.constant dense<0.0> : tensor<f32> domain [] : !f
  %c = sdg.binary gt %g[t], %z[] domain [t] : (!f, !f) -> !b
  sdg.stop_when %c[t] domain [t] : !b
}

// -----

!b = !tidal.tensor<[], i1>

// A stop over an inner dim (one per point of i: ragged outputs) is not supported yet.
// CHECK: error: sdg.stop_when over an inner dim (t, one stop per point of i) is not supported yet
sdg.graph @stop_inner dims [i < I, t < T] {
  %c = sdg.input "c" domain [i, t] : !b
  // expected-error @+1 {{sdg.stop_when over an inner dim (t, one stop per point of i) is not supported yet}}
  sdg.stop_when %c[i, t] domain [i, t] : !b
}
