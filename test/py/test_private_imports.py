"""No module of Tidal imports another module's private names (issue 44).

Each pass, and each module of the other layers, is its own room: what several
of them share is public (no leading underscore), e.g. the IR-reading and
rewriting helpers of the sdg passes in `passes/transform_utils.py`. So
`from .sdg_fuse import _read_type` (or `import a._b`) in a source folder fails
here, naming the file, line, name and module. The exceptions are MLIR's own
binding convention: the generated op modules (`*_gen`), Tidal's nanobind
extension (`_tidal_dialects`) and upstream's (`mlir._mlir_libs`, `_mlir`).
Checked on the source with `ast`, like test_layering.py.
"""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
FOLDERS = ["config", "symbolic", "dialects", "passes", "lowering", "runtime", "python/tidal"]
# Generated binding modules and upstream MLIR: private by MLIR's convention, not ours.
ALLOWED_NAMES = {"_tidal_dialects", "_tidal_enum_gen", "_mlir"}
ALLOWED_MODULES = {"mlir", "mlir._mlir_libs"}
def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _allowed(module: str, name: str) -> bool:
    last = module.rsplit(".", 1)[-1]
    return name in ALLOWED_NAMES or last.endswith("_gen") or module.lstrip(".") in ALLOWED_MODULES


def private_imports(path: pathlib.Path) -> list[tuple[int, str, str]]:
    """(line, name, module) for each private name of another module that `path` imports."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            found += [(node.lineno, a.name, module) for a in node.names
                      if _private(a.name) and not _allowed(module, a.name)]
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                for i, part in enumerate(parts[1:], 1):
                    module = ".".join(parts[:i])
                    if _private(part) and not _allowed(module, part):
                        found.append((node.lineno, part, module))
                        break
    return found


def python_files():
    for folder in FOLDERS:
        yield from sorted(p for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)


def _violations() -> list[tuple[str, int, str, str]]:
    return [(path.relative_to(ROOT).as_posix(), line, name, module)
            for path in python_files() for line, name, module in private_imports(path)]


def test_no_module_imports_another_modules_private_names():
    bad = [f"{f}:{line} imports {name} from {module}"
           for f, line, name, module in _violations()]
    assert not bad, ("make these names public (shared pass helpers: passes/transform_utils.py):\n"
                     + "\n".join(bad))


def test_checker_catches_a_probe(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from __future__ import annotations\n"
                     "from .sdg_fuse import _read_type, read_shape\n"
                     "import tidal.passes._hidden.more\n"
                     "from tidal.lowering import schedule_diagnostics as _d\n"
                     "from tidal import __version__\n"
                     "from .._rt_ops_gen import _Dialect\n"
                     "from . import _tidal_dialects, _tidal_enum_gen as enums\n"
                     "from mlir._mlir_libs import _mlir as _cext\n"
                     "import mlir._mlir_libs._mlir\n"
                     "def f():\n"
                     "    from ..runtime.scheduled.stores import _device_zeros\n")
    assert private_imports(probe) == [(2, "_read_type", ".sdg_fuse"), (3, "_hidden", "tidal.passes"),
                                      (11, "_device_zeros", "..runtime.scheduled.stores")]


def test_the_folders_exist():
    for folder in FOLDERS:
        assert (ROOT / folder / "__init__.py").exists(), folder
