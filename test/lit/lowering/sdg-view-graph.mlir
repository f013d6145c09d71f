// sdg-view-graph prints each sdg.graph as Graphviz DOT (on stderr, as
// MLIR's --view-op-graph) and leaves the IR unchanged.
// RUN: tidal-opt %s --sdg-view-graph -o /dev/null 2>&1 | FileCheck %s --check-prefix=DOT
// RUN: tidal-opt %s --sdg-view-graph 2>/dev/null | FileCheck %s --check-prefix=IR
// RUN: not tidal-opt %s --pass-pipeline='builtin.module(sdg-view-graph{file=/nonexistent/dir/g.dot})' 2>&1 | FileCheck %s --check-prefix=ERR

!v = !tidal.tensor<[4], f32>

// DOT: digraph "rec" {
// DOT: label="@rec dims [t < T]"
// DOT: n0 [label="%0 = sdg.input \"x\"\n[t]  [4] f32\n{{.*}}sdg-view-graph.mlir:{{[0-9]+}}:{{[0-9]+}}", shape="box", style="rounded,filled"
// DOT: n1 [label="%1 = sdg.merge\n[t]  [4] f32{{.*}}shape="diamond"
// DOT: n2 [label="%2 = sdg.unary tanh\n[t]  [4] f32
// DOT: n3 [label="%3 = sdg.reduce sum\n[t]  [4] f32
// DOT: n4 [label="sdg.output \"s\"\n[t]
// The base case is an ordinary edge; the recurrence's edges are the cycle (red).
// DOT-DAG: n0 -> n1 [label="0\nif t eq 0"];
// DOT-DAG: n2 -> n1 [label="t - 1\nif t ge 1", color="firebrick"
// DOT-DAG: n1 -> n2 [label="t", color="firebrick"
// DOT-DAG: n2 -> n3 [label="max(0, t - 2):t + 1"];
// DOT: }

// IR: sdg.graph @rec dims [t < T]
// IR: sdg.merge

// ERR: error: sdg-view-graph: cannot write '/nonexistent/dir/g.dot'
sdg.graph @rec dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %s = sdg.merge %x[0] if <t eq 0>, %f[t - 1] if <t ge 1> domain [t] : (!v, !v) -> !v
  %f = sdg.unary tanh %s[t] domain [t] : (!v) -> !v
  %w = sdg.reduce sum [0] %f[max(0, t - 2):t + 1] domain [t] : (!v) -> !v
  sdg.output "s" %w[t] domain [t] : !v
}
