"""The lazy pass registry and the pass base class (tidal.passes)."""
import dataclasses
import subprocess
import sys
from dataclasses import dataclass
from typing import ClassVar, Literal

import pytest

from tidal.passes import (ModulePass, UnknownPassError, all_pass_names, get_pass, option,
                          pass_options, register_pass, unregister_pass)
from tidal.passes.base import convert_option, format_option_value


def _probe(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_importing_tidal_passes_imports_no_pass_module():
    # A fresh interpreter: the registry knows sdg-dce by name only until it
    # is asked for; then its module is imported, once.
    out = _probe(
        "import sys, tidal.passes as p\n"
        "print('tidal.passes.sdg_dce' in sys.modules, p.registry.is_loaded('sdg-dce'))\n"
        "print('sdg-dce' in p.all_pass_names(), 'tidal.passes.sdg_dce' in sys.modules)\n"
        "cls = p.get_pass('sdg-dce')\n"
        "print('tidal.passes.sdg_dce' in sys.modules, cls.__name__, p.get_pass('sdg-dce') is cls)\n")
    assert out.splitlines() == ["False False", "True False", "True SdgDeadCodeElimination True"]


def test_get_pass_and_names():
    cls = get_pass("sdg-dce")
    assert issubclass(cls, ModulePass) and cls.name == "sdg-dce" and cls.summary
    assert "sdg-dce" in all_pass_names() and all_pass_names() == sorted(all_pass_names())
    with pytest.raises(UnknownPassError, match="no Tidal pass named 'nope'"):
        get_pass("nope")


def test_sdg_dce_options_come_from_its_dataclass_fields():
    (spec,) = pass_options(get_pass("sdg-dce"))
    assert (spec.name, spec.field, spec.type, spec.default) == ("keep-udfs", "keep_udfs", bool, True)
    assert spec.help and spec.type_name == "bool"
    assert get_pass("sdg-dce")(keep_udfs=False).keep_udfs is False


@dataclass
class _Toy(ModulePass):
    name: ClassVar[str] = "test-toy"
    summary: ClassVar[str] = "a toy"
    count: int = option(3, "how many")
    names: list[str] = option(["a"], "which")
    mode: Literal["fast", "slow"] = option("fast", "how")

    def run(self, op):
        pass


def test_register_a_class_then_unregister():
    register_pass(_Toy)
    try:
        assert get_pass("test-toy") is _Toy and "test-toy" in all_pass_names()
        with pytest.raises(ValueError, match="already registered"):
            register_pass(_Toy)
        register_pass(_Toy, replace=True)
        specs = {s.name: s for s in pass_options(_Toy)}
        assert specs["names"].default == ["a"] and specs["names"].type_name == "list[str]"
        assert specs["mode"].type_name == "fast|slow"
        # list defaults are not shared between instances
        a, b = _Toy(), _Toy()
        a.names.append("x")
        assert b.names == ["a"]
    finally:
        unregister_pass("test-toy")
    with pytest.raises(UnknownPassError):
        get_pass("test-toy")


def test_register_a_lazy_entry_checks_the_class_on_first_use(tmp_path, monkeypatch):
    (tmp_path / "toy_plugin.py").write_text(
        "from dataclasses import dataclass\n"
        "from typing import ClassVar\n"
        "from tidal.passes import ModulePass\n"
        "@dataclass\n"
        "class Good(ModulePass):\n"
        "    name: ClassVar[str] = 'test-lazy'\n"
        "    def run(self, op): pass\n"
        "@dataclass\n"
        "class Misnamed(ModulePass):\n"
        "    name: ClassVar[str] = 'something-else'\n"
        "    def run(self, op): pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    register_pass("test-lazy", "toy_plugin:Good")
    register_pass("test-misnamed", "toy_plugin:Misnamed")
    register_pass("test-missing", "toy_plugin:Absent")
    try:
        assert "toy_plugin" not in sys.modules
        assert get_pass("test-lazy").__name__ == "Good"
        with pytest.raises(TypeError, match="is named 'something-else'"):
            get_pass("test-misnamed")
        with pytest.raises(ImportError, match="has no class Absent"):
            get_pass("test-missing")
    finally:
        for name in ("test-lazy", "test-misnamed", "test-missing"):
            unregister_pass(name)
        sys.modules.pop("toy_plugin", None)
    with pytest.raises(ValueError, match="module:Class"):
        register_pass("x", "no_colon")
    with pytest.raises(TypeError):
        register_pass(int)


@pytest.mark.parametrize("tp,text,value", [
    (int, "42", 42), (int, "-3", -3), (int, "0x10", 16), (int, "010", 10),
    (float, "2.5e-1", 0.25), (float, "3", 3.0),
    (bool, "true", True), (bool, "FALSE", False), (bool, "1", True), (bool, "0", False),
    (bool, None, True),
    (str, "abc", "abc"), (str, '"a b"', "a b"), (str, "{a,b}", "a,b"),
    (list[int], "1,2,3", [1, 2, 3]), (list[str], "{x,y}", ["x", "y"]), (list[int], "", []),
    (list[str], '"a,b",c', ["a,b", "c"]),
    (Literal["fast", "slow"], "slow", "slow"),
])
def test_option_conversion(tp, text, value):
    assert convert_option(tp, text) == value


@pytest.mark.parametrize("tp,text,message", [
    (int, "1.5", "expected an integer"), (float, "x", "expected a number"),
    (bool, "maybe", "expected a boolean"), (int, None, "expected a value of type int"),
    (list[int], "1,a", "expected an integer"), (Literal["fast", "slow"], "medium", "one of fast, slow"),
    (dict, "a", "cannot be set from a pipeline"),
])
def test_option_conversion_errors(tp, text, message):
    with pytest.raises(ValueError, match=message):
        convert_option(tp, text)


def test_format_option_value_round_trips():
    for tp, value in [(bool, True), (bool, False), (int, 7), (list[int], [1, 2]), (str, "s")]:
        assert convert_option(tp, format_option_value(value)) == value
    assert format_option_value(dataclasses.MISSING) == "<required>"
