"""The host program: the lowered `func.func` (scf/arith/func.call) as Python.

`host_source(run_func, bounds, skip)` translates the function produced by
`sdg-lower-to-scf` op by op: `scf.for` -> `for c in range(lb, ub, step):`,
`scf.if` -> `if`/`else`, `arith` -> integer expressions bound to locals, and
`func.call @<graph>_op<k>(...)` -> `_L<k>(...)` (a launcher; calls to nodes in
`skip`, e.g. inputs already in their stores, are dropped), and
`@<graph>_alloc<k>()` / `@<graph>_free<k>()` -> `_alloc(k)` / `_free(k)` (a
store's lifetime, lowering/lifetimes.py). The result is
compiled once with `compile()`; running it is plain Python loops calling
launchers, with no AST interpretation at run time.

With `traceable` (node -> the store keys its traced launcher uses, see
traced.py), an outermost `scf.for` whose body calls only traceable launchers
becomes one call `_loop<n>(lb, ub, free...)` that runs the whole loop nest as
a `lax.fori_loop` inside one XLA program: its body is generated here in
*traced* form (`B = _T<k>(B, ...)` on a dict of buffers, `scf.if` as
`_cond`, integer ops through helpers that accept traced values); the loop
structure stays the one isl produced. The traceable top-level launches next
to such a loop (an RNN's `h[0]` before its steps) join it in the same XLA
program (`region_end`): one launch for the run, not one per statement.

With `stops` (an `sdg.stop_when` node -> the bound it stops, lowering/stopping.py),
that bound is a global of the host program that the stop's launcher lowers to
t_stop + 1: every integer expression that uses it is written out where it is
used (never kept in a variable, so it is evaluated again after the stop), and
every `scf.for` that calls a stop becomes a loop that tests its upper bound at
each step (`while c < ub:`; traced, `_wfori` with the bound carried in `B`
as `_DYN<bound>`, a traced region ending with that loop).
"""
from __future__ import annotations

import re

from mlir import ir

__all__ = ["host_source", "HostGenError"]

_BIN = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*", "arith.floordivsi": "//",
        "arith.andi": "and", "arith.ori": "or"}
_CMP = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">="}   # arith.cmpi predicates eq..sge
_CALLS = {"arith.remsi": "_remsi", "arith.divsi": "_divsi", "arith.minsi": "_min",
          "arith.maxsi": "_max", "arith.ceildivsi": "_ceildivsi"}
# in traced code: helpers that also accept traced values (traced.py)
_TRACED_CALLS = {"_remsi": "_tremsi", "_divsi": "_tdivsi", "_min": "_tmin", "_max": "_tmax",
                 "_ceildivsi": "_ceildivsi"}
_ARITH = set(_BIN) | set(_CALLS) | {"arith.cmpi", "arith.xori", "arith.select", "arith.constant"}


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# launches a traced region takes besides its loops (the statements next to a
# loop): a few small ones save their dispatches; a model's whole weight
# preparation (a decode's 60 statements) made its XLA program 180 MB larger
# at peak RSS and 1.2 s longer to compile
REGION_LAUNCHES = 8


def _calls(block: ir.Block):
    """The func.call ops of a block, nested regions included."""
    for op in block.operations:
        op = op.operation
        if op.name == "func.call":
            yield op
        for region in op.regions:
            for inner in region.blocks:
                yield from _calls(inner)


class HostGenError(Exception):
    pass


def remsi(a: int, b: int) -> int:
    """`arith.remsi`: the remainder of a / b truncated toward zero (the sign of a)."""
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def divsi(a: int, b: int) -> int:
    """`arith.divsi`: a / b truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _ceildivsi(a: int, b: int) -> int:
    return -((-a) // b)


HELPERS = {"_remsi": remsi, "_divsi": divsi, "_ceildivsi": _ceildivsi, "_min": min, "_max": max}


class _Gen:
    def __init__(self, skip: set[int], traceable: dict | None = None):
        self.names: dict = {}
        self.lines: list[str] = []
        self.skip = skip
        self.count = 0
        self.traceable = traceable or {}
        self.memory: dict = {}     # callee -> ("alloc" | "free", node)
        self.guard = False
        self.tr = False            # generating traced code (inside a `_loop<n>`)
        self.inside: set[str] = set()   # traced: names defined inside the traced loop
        self.free: list[str] = []       # traced: names from outside it, passed in
        self.keys: set[str] = set()     # traced: the store keys its launchers use
        self.extra: list[str] = []      # module-level source of the loop functions
        self.loops: list[int] = []
        self.stops: dict[int, str] = {}  # stop node -> the bound it stops
        self.dyn: set[str] = set()       # the stopped bounds (globals that change during a run)
        self.plain_only = False          # generating a region's ops in Python after all

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def v(self, value: ir.Value) -> str:
        try:
            name = self.names[value]
        except KeyError:
            raise HostGenError(f"value {value.get_name()} is used before it is defined") from None
        if isinstance(name, ir.Operation):    # uses a stopped bound: written out here, in this mode
            name = self.arith_expr(name)
        if self.tr and name.isidentifier() and name not in self.inside and name not in self.bounds \
                and name not in ("True", "False") and name not in self.free:
            self.free.append(name)
        elif self.tr and not name.isidentifier():    # an expression written out (a stopped bound's)
            for word in _LOCAL.findall(name):
                if word not in self.inside and word not in self.free:
                    self.free.append(word)
        return name

    def define(self, name: str) -> str:
        if self.tr:
            self.inside.add(name)
        return name

    def block(self, block: ir.Block, depth: int) -> None:
        start = len(self.lines)
        ops = [op.operation for op in block.operations]
        i = 0
        while i < len(ops):
            end = self.region_end(ops, i) if depth == 1 and not self.tr and not self.plain_only else i
            if end > i:
                self.traced_region(ops[i:end], depth)
                i = end
                continue
            self.op(ops[i], depth)
            i += 1
        if len(self.lines) == start:
            self.lines.append("    " * depth + "pass")

    def op(self, op: ir.Operation, depth: int) -> None:
        pad = "    " * depth
        name = op.name
        if name in ("func.return", "scf.yield"):
            return
        if name == "arith.constant":
            attr = op.attributes["value"]
            text = "True" if str(attr) == "true" else "False" if str(attr) == "false" else \
                str(ir.IntegerAttr(attr).value)
            self.names[op.results[0]] = text
            return
        if name.startswith("arith."):
            expr = self.arith_expr(op)
            if self.dyn and any(w in self.dyn for w in _WORD.findall(expr)):
                self.names[op.results[0]] = op    # uses a stopped bound: evaluated where used
                return
            var = self.define(self.fresh("v"))
            self.lines.append(f"{pad}{var} = {expr}")
            self.names[op.results[0]] = var
            return
        self.structure(op, depth)

    def arith_expr(self, op: ir.Operation) -> str:
        """The expression of an `arith` op (plain, or traced inside a loop function)."""
        name = op.name
        args = [self.v(x) for x in op.operands]
        if self.tr and name in ("arith.andi", "arith.ori"):
            expr = f"{'_and' if name == 'arith.andi' else '_or'}({args[0]}, {args[1]})"
        elif name in _BIN:
            expr = f"({args[0]} {_BIN[name]} {args[1]})"
        elif name == "arith.cmpi":
            pred = ir.IntegerAttr(op.attributes["predicate"]).value
            if pred not in _CMP:
                raise HostGenError(f"unsupported arith.cmpi predicate {pred} (unsigned?)")
            expr = f"({args[0]} {_CMP[pred]} {args[1]})"
        elif name == "arith.xori":
            expr = f"({args[0]} != {args[1]})"
        elif name == "arith.select":
            expr = f"_sel({args[0]}, {args[1]}, {args[2]})" if self.tr else \
                f"({args[1]} if {args[0]} else {args[2]})"
        elif name in _CALLS:
            call = _TRACED_CALLS[_CALLS[name]] if self.tr else _CALLS[name]
            expr = f"{call}({args[0]}, {args[1]})"
        else:
            raise HostGenError(f"unsupported op '{name}' in the lowered program")
        return expr

    def structure(self, op: ir.Operation, depth: int) -> None:
        """Loops, guards and calls."""
        pad = "    " * depth
        name = op.name
        if name in ("scf.for", "scf.if") and not self.runs_anything(op):
            return      # e.g. a guard around an input's statement: nothing to run
        if name == "scf.for" and not self.tr and not self.plain_only and self.loop_traceable(op):
            self.traced_loop(op, depth)
            return
        if name == "scf.for" and self.tr:
            lb, ub, step = (self.v(x) for x in op.operands[:3])
            body = op.regions[0].blocks[0]
            iv, fn = self.define(self.fresh("c")), self.fresh("_step")
            self.names[body.arguments[0]] = iv
            self.lines += [f"{pad}def {fn}({iv}, _B):", f"{pad}    _B = dict(_B)"]
            stopping = self.stops_in(op)
            if stopping:    # the stopped bounds as the loop carries them (traced values)
                self.lines += [f"{pad}    {b} = _B['_DYN{b}']" for b in stopping]
                self.stopped |= set(stopping)
            self.block(body, depth + 1)
            self.lines.append(f"{pad}    return _B")
            if stopping:
                ubf = self.fresh("_ub")
                self.lines += [f"{pad}def {ubf}(_B):"] + [f"{pad}    {b} = _B['_DYN{b}']" for b in stopping] + \
                    [f"{pad}    return {ub}", f"{pad}_B = _wfori({lb}, {ubf}, {step}, {fn}, _B)"]
            else:
                self.lines.append(f"{pad}_B = _fori({lb}, {ub}, {step}, {fn}, _B)")
            return
        if name == "scf.if" and self.tr:
            cond = self.v(op.operands[0])
            fns = []
            for region in op.regions:
                fn = self.fresh("_branch")
                fns.append(fn)
                self.lines += [f"{pad}def {fn}(_B):", f"{pad}    _B = dict(_B)"]
                if len(region.blocks):
                    self.block(region.blocks[0], depth + 1)
                self.lines.append(f"{pad}    return _B")
            if len(fns) == 1:
                fns.append("dict")
            self.lines.append(f"{pad}_B = _cond({cond}, {fns[0]}, {fns[1]}, _B)")
            return
        if name == "scf.for":
            lb, ub, step = (self.v(x) for x in op.operands[:3])
            body = op.regions[0].blocks[0]
            iv = self.fresh("c")
            self.names[body.arguments[0]] = iv
            if self.stops_in(op):     # the upper bound tested again at each step (a stop lowers it)
                self.lines += [f"{pad}{iv} = {lb}", f"{pad}while {iv} < {ub}:"]
                self.block(body, depth + 1)
                self.lines.append(f"{pad}    {iv} += {step}")
                return
            rng = f"range({lb}, {ub})" if step == "1" else f"range({lb}, {ub}, {step})"
            self.lines.append(f"{pad}for {iv} in {rng}:")
            self.block(body, depth + 1)
            return
        if name == "scf.if":
            self.lines.append(f"{pad}if {self.v(op.operands[0])}:")
            self.block(op.regions[0].blocks[0], depth + 1)
            if len(op.regions) > 1 and len(op.regions[1].blocks):
                self.lines.append(f"{pad}else:")
                self.block(op.regions[1].blocks[0], depth + 1)
            return
        if name == "func.call":
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            if callee in self.memory:       # a store's lifetime (lowering/lifetimes.py)
                if self.tr:
                    raise HostGenError(f"@{callee} inside a loop (stores are allocated and freed "
                                       f"between top-level statements only)")
                kind, index = self.memory[callee]
                # just after another alloc or free: nothing ran between (memory.py samples less)
                quiet = ", True" if self.lines and self.lines[-1].lstrip().startswith(("_alloc(", "_free(")) \
                    and self.lines[-1].startswith(pad + "_") else ""
                self.lines.append(f"{pad}_{kind}({index}{quiet})")
                return
            index = self.callees[callee]
            if index not in self.skip:
                args = ", ".join(self.v(x) for x in op.operands)
                if self.tr:
                    self.keys |= self.traceable[index][0]
                    self.bounds_used |= self.traceable[index][1]
                    self.written |= self.traceable[index][2]
                    self.called.add(index)
                    # a merge's branches that can hold here (lowering/merge_branches.py)
                    only = f", _br={tuple(ir.DenseI64ArrayAttr(op.attributes['tidal.branches']))!r}" \
                        if "tidal.branches" in op.attributes else ""
                    self.lines.append(f"{pad}_B = _T{index}(_B{''.join(', ' + a for a in args.split(', ') if a)}{only})")
                else:
                    guard = f"_G({index}{', ' + args if args else ''}); " if self.guard else ""   # swapping.py
                    self.lines.append(f"{pad}{guard}_L{index}({args})")
            return
        raise HostGenError(f"unsupported op '{name}' in the lowered program")

    def stops_in(self, op: ir.Operation) -> list[str]:
        """The bounds that the stops called inside `op` (a loop) lower."""
        if not self.stops:
            return []
        found = set()
        for region in op.regions:
            for block in region.blocks:
                for call in _calls(block):
                    k = self.callees.get(ir.FlatSymbolRefAttr(call.attributes["callee"]).value)
                    if k in self.stops:
                        found.add(self.stops[k])
        return sorted(found)

    def is_stop(self, op: ir.Operation) -> bool:
        return op.name == "func.call" and self.callees.get(
            ir.FlatSymbolRefAttr(op.attributes["callee"]).value) in self.stops

    def runs_anything(self, op: ir.Operation) -> bool:
        """Whether a loop or guard calls a launcher or a store's lifetime."""
        for region in op.regions:
            for block in region.blocks:
                for call in _calls(block):
                    callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
                    if callee in self.memory or self.callees.get(callee) not in self.skip:
                        return True
        return False

    # -- loops inside XLA (traced.py) ------------------------------------------------------
    def loop_traceable(self, loop: ir.Operation) -> bool:
        """Whether every op of the loop nest has a traced form."""
        if not self.traceable or len(loop.results):
            return False
        calls = 0

        def ok(op) -> bool:
            nonlocal calls
            name = op.name
            if name == "func.call":
                callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                if callee in self.memory:
                    return False
                index = self.callees[callee]
                if index in self.skip:
                    return True
                calls += 1
                return index in self.traceable
            if name in ("scf.for", "scf.if"):
                if len(op.results):
                    return False
            elif name not in _ARITH and name != "scf.yield":
                return False
            if name == "arith.cmpi" and ir.IntegerAttr(op.attributes["predicate"]).value not in _CMP:
                return False
            return all(ok(inner.operation) for region in op.regions for block in region.blocks
                       for inner in block.operations)

        return ok(loop) and calls > 0

    def region_end(self, ops: list, i: int) -> int:
        """The end of a traced region starting at top-level op i (i: none): a
        run of traceable launches, allocations and loops that holds at least
        one traceable loop, at most REGION_LAUNCHES launches besides its loops,
        and does not start with an allocation; a free ends it (the allocations
        run before the region, so a value freed inside would overlap those
        allocated after it: memory_plan.py). One XLA program then runs a loop
        with the statements just before and after it (an RNN's h[0] with its
        steps): one dispatch, no host-written points to pack."""
        first = ops[i]
        if not self.traceable or (first.name == "func.call" and
                                  ir.FlatSymbolRefAttr(first.attributes["callee"]).value in self.memory):
            return i
        end, loops, launches = i, 0, 0
        for k in range(i, len(ops)):
            op = ops[k]
            if op.name == "arith.constant":     # no code: a literal where it is used
                continue
            if op.name == "scf.for" and self.runs_anything(op) and self.loop_traceable(op):
                loops += 1
                end = k + 1
                if self.stops_in(op):
                    break       # what follows reads the stopped bound from the host
                continue
            if op.name != "func.call" or self.is_stop(op):
                break
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            if callee in self.memory:
                if self.memory[callee][0] == "free":
                    break       # a value that dies here would live to the region's end
                continue
            index = self.callees[callee]
            if index in self.skip:
                continue
            if index not in self.traceable or launches == REGION_LAUNCHES:
                break
            launches += 1
            end = k + 1
        return end if loops else i

    def traced_loop(self, op: ir.Operation, depth: int) -> None:
        self.traced_region([op], depth)

    def traced_region(self, ops: list, depth: int) -> None:
        """`_loop<n>(free...)` here; in `extra`, its jitted function `_J<n>` and
        `_plain<n>`, the same statements in Python (run if the trace fails). The
        region's allocations run before it (it holds no frees: `region_end`)."""
        n = len(self.loops) + 1
        self.loops.append(n)
        allocs = [o for o in ops if o.name == "func.call"
                  and ir.FlatSymbolRefAttr(o.attributes["callee"]).value in self.memory]
        ops = [o for o in ops if o not in allocs]
        for o in allocs:
            self.op(o, depth)
        outer = self.lines
        self.lines, self.tr, self.inside, self.free, self.keys = [], True, set(), [], set()
        self.bounds_used, self.written, self.called, self.stopped = set(), set(), set(), set()
        try:
            for op in ops:       # the loop itself, traced: `_B = _fori(...)`, and the launches around it
                self.op(op, 1)
            body, free, keys = self.lines, self.free, sorted(self.keys)
            # the buffers the loop writes are donated (updated in place); the rest it
            # only reads (weights...): passed as they are, kept valid for later readers
            written = sorted(k for k in keys if k in self.written or _owner(k) in self.called)
            # bounds the launchers read (kernel sizes...) are the jit key; those only
            # the loop structure reads (trip counts, conditions) are traced arguments,
            # so a new value of such a bound does not recompile the loop
            static = sorted(self.bounds_used)
            traced = sorted({w for line in body for w in _WORD.findall(line)
                             if w in self.bounds} - self.bounds_used)
            stopped = sorted(self.stopped)
            keys = sorted(set(keys) | {f"_DYN{b}" for b in stopped})
            written = sorted(set(written) | {f"_DYN{b}" for b in stopped})
        finally:
            self.lines, self.tr = outer, False
        if set(stopped) & set(static):
            # a kernel's size reads the stopped bound: it cannot change inside one XLA program
            self.plain_only = True
            try:
                for op in ops:
                    self.op(op, depth)
            finally:
                self.plain_only = False
            self.loops.pop()
            return
        self.lines, traceable = [], self.traceable
        self.traceable = {}      # the plain twin calls the plain launchers
        try:
            for op in ops:
                self.op(op, 1)
            plain = self.lines
        finally:
            self.lines, self.traceable = outer, traceable
        params = ", ".join(free)
        args = "".join(a + ", " for a in traced + free)
        self.extra.append("\n".join(
            [f"def _loop{n}_fn(_bv, {args}_R, _B):",
             f"    _count_trace('_loop{n}')",
             "    _B = {**_R, **_B, **_zeros(_bv[1])}"] + body + [f"    return {{_k: _B[_k] for _k in _WKEYS{n}}}",
             f"_J{n} = _jit_loop(_loop{n}_fn)",
             f"_KEYS{n} = {keys!r}",
             f"_WKEYS{n} = {written!r}",
             f"def _plain{n}({params}):"] + plain +
            [f"def _loop{n}({params}):",
             f"    _run_loop({n}, _J{n}, _KEYS{n}, _WKEYS{n}, _plain{n}, ({args}), ({params}{',' if free else ''}), "
             f"({''.join(b + ', ' for b in static)}))"]) + "\n")
        self.lines.append(f"{'    ' * depth}_loop{n}({params})")


_KEY_NODE = re.compile(r"_(?:S|IX|EG)(\d+)")
_LOCAL = re.compile(r"\b[vc]\d+\b")      # the host program's locals (`v3`, `c2`)


def _owner(key: str) -> int | None:
    """The node whose launcher writes buffer `key` of B (`_S3`, `_S3_1`, `_S3#n`,
    `_IX3`, `_EG3`: node 3)."""
    m = _KEY_NODE.match(key)
    return int(m.group(1)) if m else None


def host_source(module_op: ir.Operation, run_name: str, skip: set[int],
                traceable: dict | None = None, guard: bool = False,
                stops: dict | None = None, dynamic: set | None = None) -> tuple[str, list[str]]:
    """(source of `def _program(<bounds>):`, bound names) for function `run_name`;
    with `traceable`, preceded by its loop functions (`_loop<n>`); with
    `guard`, every launch `_L<k>(...)` preceded by `_G(k)` (swapping.py);
    `stops`: stop node -> the bound it lowers; `dynamic`: the bounds that change
    during a run (those and the bounds derived from them: globals, not arguments)."""
    body = module_op.regions[0].blocks[0]
    callees, memory, run = {}, {}, None
    for op in body.operations:
        op = op.operation
        if op.name != "func.func":
            continue
        sym = ir.StringAttr(op.attributes["sym_name"]).value
        if "tidal.op_index" in op.attributes:
            callees[sym] = ir.IntegerAttr(op.attributes["tidal.op_index"]).value
        if "tidal.memory" in op.attributes:
            memory[sym] = (ir.StringAttr(op.attributes["tidal.memory"]).value,
                           ir.IntegerAttr(op.attributes["tidal.node"]).value)
        if sym == run_name:
            run = op
    if run is None:
        raise HostGenError(f"no function @{run_name} in the lowered module")
    bounds = [ir.StringAttr(a).value for a in ir.ArrayAttr(run.attributes["tidal.bounds"])]
    gen = _Gen(skip, traceable)
    gen.callees = callees
    gen.memory = memory
    gen.guard = guard
    gen.bounds = set(bounds)
    gen.stops = dict(stops or {})
    gen.dyn = set(gen.stops.values()) | set(dynamic or ())
    entry = run.regions[0].blocks[0]
    for arg, b in zip(entry.arguments, bounds):
        gen.names[arg] = b
    gen.block(entry, 1)
    extra = "".join(e + "\n" for e in gen.extra)
    params = ", ".join(f"_given_{b}" if b in gen.dyn else b for b in bounds)   # a stopped bound: the global
    return extra + f"def _program({params}):\n" + "\n".join(gen.lines) + "\n", bounds
