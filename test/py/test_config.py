"""tidal.config: every TIDAL_* variable is declared there, read nowhere else, and
documented in the README; values it does not accept are errors naming the variable."""
import pathlib
import re

import pytest

from tidal import config

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = ["python", "symbolic", "dialects", "passes", "lowering", "runtime", "bench", "examples", "test"]
NAME = re.compile(r"\bTIDAL_[A-Z][A-Z0-9_]*\b(?<!_H)")   # not the C++ headers' include guards


def source_files():
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".cc", ".cpp", ".h", ".md") and "__pycache__" not in path.parts:
                yield path


def test_every_tidal_variable_in_the_tree_is_declared():
    declared = {s.env for s in config.SETTINGS}
    used = {}
    for path in [*source_files(), ROOT / "README.md", ROOT / "Makefile", *(ROOT / "docs").glob("*.md")]:
        for name in NAME.findall(path.read_text(errors="replace")):
            used.setdefault(name, path.relative_to(ROOT))
    unknown = {n: str(p) for n, p in used.items() if n not in declared}
    assert not unknown, f"TIDAL_* names not declared in config/__init__.py: {unknown}"


def test_no_module_reads_a_tidal_variable_itself():
    """The environment is read in tidal.config alone (the C++ CPU kernels read
    TIDAL_CPU_KERNELS_GENERIC once per process, declared there too)."""
    reads = re.compile(r"(environ(\.get)?\s*[\[(]|getenv\s*\()\s*[\"']TIDAL_")
    found = [f"{p.relative_to(ROOT)}:{i}" for p in source_files() if p.suffix == ".py"
             for i, line in enumerate(p.read_text().splitlines(), 1) if reads.search(line)]
    assert not found, "read TIDAL_* through tidal.config:\n" + "\n".join(found)


def test_the_readme_lists_every_setting():
    readme = (ROOT / "README.md").read_text()
    assert config.describe(testing=False) in readme, \
        "README.md's settings table is stale: paste config.describe(testing=False)"
    testing = (ROOT / "docs" / "testing.md").read_text()
    assert config.describe(testing=True) in testing, \
        "docs/testing.md's settings table is stale: paste config.describe(testing=True)"


def test_values_are_parsed_and_bad_ones_name_the_variable(monkeypatch):
    monkeypatch.delenv("TIDAL_XLA_LOOPS", raising=False)
    assert config.xla_loops.value == "on"
    monkeypatch.setenv("TIDAL_XLA_LOOPS", "strict")
    assert config.xla_loops.value == "strict"
    monkeypatch.setenv("TIDAL_XLA_LOOPS", "fast")
    with pytest.raises(ValueError, match="TIDAL_XLA_LOOPS='fast': use one of on, off, strict"):
        config.xla_loops.value
    monkeypatch.setenv("TIDAL_MEMORY_LIMIT", "1000")
    assert config.memory_limit.value == 1000
    for bad in ("-5", "lots"):
        monkeypatch.setenv("TIDAL_MEMORY_LIMIT", bad)
        with pytest.raises(ValueError, match="TIDAL_MEMORY_LIMIT.*positive number of bytes"):
            config.memory_limit.value
    for text, on in (("1", True), ("yes", True), ("0", False), ("off", False), ("", False)):
        monkeypatch.setenv("TIDAL_TIMINGS", text)
        assert config.timings.value is on
    monkeypatch.setenv("TIDAL_FUZZ_EXCLUDE", "a, b,,c")
    assert config.fuzz_exclude.value == {"a", "b", "c"}
