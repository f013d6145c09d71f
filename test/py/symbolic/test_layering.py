"""The symbolic library is Tidal's base layer: it imports nothing else of Tidal,
and islpy only through the isl bridge."""

import ast
import os
import subprocess
import sys
import textwrap

import tidal.symbolic

PACKAGE_DIR = os.path.dirname(tidal.symbolic.__file__)
ALLOWED_THIRD_PARTY = {"islpy", "numpy"}


def _modules():
    return sorted(f for f in os.listdir(PACKAGE_DIR) if f.endswith(".py"))


def _absolute_imports(path):
    tree = ast.parse(open(path).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0], node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module.split(".")[0], node.lineno


def test_only_relative_stdlib_and_allowed_imports():
    stdlib = set(sys.stdlib_module_names)
    for name in _modules():
        for module, line in _absolute_imports(os.path.join(PACKAGE_DIR, name)):
            assert module != "tidal", f"{name}:{line} imports tidal (use relative imports)"
            assert module in stdlib or module in ALLOWED_THIRD_PARTY, f"{name}:{line} imports {module}"
            if module == "islpy":
                assert name == "isl_bridge.py", f"{name}:{line} imports islpy outside the isl bridge"


def _run(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_importing_the_library_loads_no_islpy_and_nothing_else_of_tidal():
    out = _run(
        """
        import sys
        import tidal.symbolic as s
        t, T = s.Dim("t")
        s.invert(s.parse("[max(0, t - 3):t + 1]"), [s.Dim("t")], [s.Dim("t")])
        s.simplify(s.min_(t + 3, T)); s.compile_expr(t + 1, [t, T])
        ours = sorted(m for m in sys.modules if m.startswith("tidal.") and not m.startswith("tidal.symbolic"))
        print("islpy" in sys.modules, ours)
        """
    )
    assert out.strip() == "False []"


def test_the_isl_bridge_loads_islpy():
    out = _run(
        """
        import sys
        import tidal.symbolic.isl_bridge
        print("islpy" in sys.modules)
        """
    )
    assert out.strip() == "True"
