"""The layers depend on each other one way only (docs/architecture.md):

config <- symbolic <- dialects <- passes <- lowering <- runtime <- frontend
(python/tidal), and nothing imports the frontend. `tidal.config` (the settings)
imports nothing of Tidal's. Checked on the source with `ast`, so a
violation fails here even if no test happens to execute the offending import.
"""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# layer -> (source folder, package name)
LAYERS = {
    "config": (ROOT / "config", "tidal.config"),
    "symbolic": (ROOT / "symbolic", "tidal.symbolic"),
    "dialects": (ROOT / "dialects", "tidal.dialects"),
    "passes": (ROOT / "passes", "tidal.passes"),
    "lowering": (ROOT / "lowering", "tidal.lowering"),
    "runtime": (ROOT / "runtime", "tidal.runtime"),
}
ORDER = list(LAYERS)
FRONTEND = ROOT / "python" / "tidal"


def allowed_packages(layer: str) -> set[str]:
    """A layer may import itself and the layers below it."""
    return {LAYERS[name][1] for name in ORDER[: ORDER.index(layer) + 1]}


def tidal_imports(path: pathlib.Path, package: str) -> list[tuple[int, str]]:
    """Absolute names of the `tidal.*` modules a file imports."""
    module_parts = package.split(".") + list(path.relative_to(LAYERS_DIR[package]).with_suffix("").parts)
    if module_parts[-1] == "__init__":
        module_parts = module_parts[:-1]
    else:
        module_parts = module_parts[:-1]  # the file's package
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module_parts[: len(module_parts) - node.level + 1]
                names = [".".join(base + ([node.module] if node.module else []))]
            else:
                names = [node.module or ""]
            if names == ["tidal"]:     # `from tidal import config`: the submodules named
                names = [f"tidal.{alias.name}" for alias in node.names]
        else:
            continue
        found += [(node.lineno, n) for n in names if n == "tidal" or n.startswith("tidal.")]
    return found


LAYERS_DIR = {pkg: folder for folder, pkg in LAYERS.values()}


def python_files(folder: pathlib.Path):
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("layer", ORDER)
def test_layer_imports_only_layers_below(layer):
    folder, package = LAYERS[layer]
    allowed = allowed_packages(layer)
    violations = []
    for path in python_files(folder):
        for line, name in tidal_imports(path, package):
            if not any(name == a or name.startswith(a + ".") for a in allowed):
                violations.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not violations, f"{layer} may only import {sorted(allowed)}:\n" + "\n".join(violations)


def test_checker_sees_relative_imports(tmp_path):
    """The checker resolves `from ..passes import x` inside tidal.dialects."""
    bad = LAYERS["dialects"][0] / "_layering_probe.py"
    bad.write_text("from ..passes import registry\n")
    try:
        names = [n for _, n in tidal_imports(bad, "tidal.dialects")]
    finally:
        bad.unlink()
    assert names == ["tidal.passes"]


def test_layers_exist_and_have_code():
    for layer, (folder, _) in LAYERS.items():
        assert (folder / "__init__.py").exists(), layer
    assert (FRONTEND / "__init__.py").exists()


def higher_layer_strings(path: pathlib.Path, layer: str) -> list[tuple[int, str]]:
    """(line, text) of the strings in `path` that name a module of a layer above `layer`."""
    above = [LAYERS[name][1] for name in ORDER[ORDER.index(layer) + 1:]]
    return [(node.lineno, node.value) for node in ast.walk(ast.parse(path.read_text(), str(path)))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and any(node.value.startswith((pkg + ".", pkg + ":")) for pkg in above)]


def test_no_layer_names_a_module_of_a_layer_above_in_a_string():
    """A registry entry "tidal.lowering.x:Cls" in tidal.passes would import a
    higher layer by name, where the import check above cannot see it."""
    violations = [f"{path.relative_to(ROOT)}:{line} names {text!r}" for layer in ORDER
                  for path in python_files(LAYERS[layer][0]) for line, text in higher_layer_strings(path, layer)]
    assert not violations, "a layer names a module above it:\n" + "\n".join(violations)


def test_string_check_sees_a_lazy_registry_entry(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('TABLE = {"sdg-schedule": "tidal.lowering.sdg_schedule:SdgSchedule"}\n'
                     'OK = "tidal.symbolic.expr"\n')
    assert higher_layer_strings(probe, "passes") == [(1, "tidal.lowering.sdg_schedule:SdgSchedule")]
