"""The README's code blocks run as written (except the set-up commands and the
long runs, whose fences say `setup` or `long`): its Python blocks one after
another in one namespace, its shell blocks line by line from the repository
root, with the environment's scripts (tidal-opt, mlir-opt, FileCheck) on PATH."""
import os
import re
import subprocess
import sys
import sysconfig

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.S | re.M)


def blocks(kind: str) -> list[str]:
    text = open(os.path.join(ROOT, "README.md")).read()
    out = []
    for info, body in FENCE.findall(text):
        words = info.split()
        if words and words[0] == kind and not {"setup", "long"} & set(words[1:]):
            out.append(body)
    return out


def test_the_readme_has_runnable_blocks_and_marks_the_rest():
    text = open(os.path.join(ROOT, "README.md")).read()
    assert len(blocks("python")) >= 2 and len(blocks("bash")) >= 2
    infos = [i.split() for i, _ in FENCE.findall(text)]
    assert ["bash", "setup"] in infos and ["bash", "long"] in infos
    for info in infos:   # every fence says what it is
        assert info and info[0] in ("python", "bash", "text", "mlir"), info


def test_python_blocks(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ns = {"__name__": "__readme__"}
    for body in blocks("python"):
        exec(compile(body, "README.md", "exec"), ns)  # noqa: S102
    assert "out" in ns and sorted(ns["out"]) == ["g", "n", "s"]
    assert (tmp_path / "out" / "index.json").exists() and (tmp_path / "sdg.svg").stat().st_size > 0
    assert (tmp_path / "schedule.png").read_bytes()[:4] == b"\x89PNG"


def _commands():
    out = []
    for body in blocks("bash"):
        for line in body.splitlines():
            line = line.split("  #")[0].strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out


@pytest.mark.parametrize("command", _commands())
def test_shell_commands(command):
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + sysconfig.get_path("scripts") + \
        os.pathsep + env.get("PATH", "")
    r = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{command}\n{r.stderr[-2000:]}"
    assert r.stdout.strip() or r.stderr.strip()
