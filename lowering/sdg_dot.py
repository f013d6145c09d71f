"""Graphviz DOT for symbolic dependence graphs (`exe.draw("sdg", ...)`,
`tidal-opt --sdg-view-graph`).

One node per op, labelled with its result (`%3 = sdg.binary add`), its
domain, its per-point shape and dtype, and the user's line; one edge per
operand, from producer to consumer, labelled with its dependence expression
(`t - 1`, `0:t + 1`, `t:min(t + 3, T)`) and, for a merge branch, its
condition. Inputs, params and outputs are filled; merges are diamonds; the
edges inside a cycle (a recurrence: a strongly connected component) are red
and bold.

Before (`tidal-opt g.mlir --sdg-view-graph -o /dev/null`):

    %x = sdg.input "x" domain [t] : !tidal.tensor<[3], f32>
    %s = sdg.merge %x[0] if <t eq 0>, %s[t - 1] if <true> domain [t] : ...

After (on stderr, as MLIR's --view-op-graph):

    digraph "g" {
      n0 [label="%0 = sdg.input x\\n[t]  [3] f32\\ng.py:3:5", ...];
      n0 -> n1 [label="0\\nif t == 0"];
      n1 -> n1 [label="t - 1", color="firebrick", style="bold"];
    }
"""
from __future__ import annotations

from .graph import Graph, components

__all__ = ["graph_dot"]

_STYLE = {
    "sdg.input": 'shape="box", style="rounded,filled", fillcolor="#dbe9f6"',
    "sdg.param": 'shape="box", style="rounded,filled", fillcolor="#e6e6e6"',
    "sdg.output": 'shape="box", style="rounded,filled", fillcolor="#dcf0d5"',
    "sdg.merge": 'shape="diamond", style="filled", fillcolor="#fdf0d5"',
    "sdg.udf": 'shape="box", style="filled", fillcolor="#f6dbe9"',
}


def _q(text: str) -> str:
    """A DOT string literal (labels keep `\\n` as line breaks)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _short_location(location: str) -> str:
    path, _, rest = location.partition(":")
    return path.rsplit("/", 1)[-1] + (":" + rest if rest else "")


def _node_label(graph: Graph, k: int) -> str:
    node = graph.nodes[k]
    parts = [f"[{', '.join(node.domain)}]"]
    if node.name != "sdg.output":
        parts += [f"[{', '.join(shape)}] {dtype}" for shape, dtype in zip(node.result_shapes, node.result_dtypes)]
    return "\n".join([node.label, "  ".join(parts), _short_location(node.location)])


def _dep_label(edge) -> str:
    text = edge.dep_text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if edge.cond_text not in ("true", ""):
        text += f"\nif {edge.cond_text}"
    return text or "[]"


def graph_dot(graph: Graph) -> str:
    """The DOT text of `graph` (see the module doc)."""
    cyclic: set[tuple[int, int]] = set()
    for component in components(graph):
        members = set(component)
        for k in component:
            for e in graph.nodes[k].edges:
                if e.source in members and (len(members) > 1 or e.source == k):
                    cyclic.add((e.source, k))
    dims = ", ".join(f"{d.step.name} < {d.bound.name}" for d in graph.dims)
    lines = [f"digraph {_q(graph.name)} {{",
             f"  label={_q(f'@{graph.name} dims [{dims}]')}; labelloc=\"t\"; rankdir=\"TB\";",
             '  node [fontname="Helvetica", fontsize=10, shape="box"];',
             '  edge [fontname="Helvetica", fontsize=9];']
    for node in graph.nodes:
        style = _STYLE.get(node.name, "")
        lines.append(f"  n{node.index} [label={_q(_node_label(graph, node.index))}"
                     + (f", {style}" if style else "") + "];")
    for node in graph.nodes:
        for e in node.edges:
            attrs = [f"label={_q(_dep_label(e))}"]
            if (e.source, node.index) in cyclic:
                attrs.append('color="firebrick", fontcolor="firebrick", style="bold"')
            lines.append(f"  n{e.source} -> n{node.index} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
