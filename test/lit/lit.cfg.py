# -*- Python -*-
# lit configuration for Tidal's FileCheck tests: `lit -sv test/lit`.
#
# Tools come first on PATH: mlir-opt (site-packages/mlir/bin), FileCheck and
# not (site-packages/llvm/bin), and the installed `tidal-opt` script.
import os
import shutil
import sys
import sysconfig

import lit.formats

config.name = "Tidal"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["Inputs", "Output", "lit.cfg.py"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = os.path.join(config.test_source_root, "Output")  # git-ignored

try:
    import mlir
except ImportError as e:
    lit_config.fatal(f"cannot import the MLIR Python bindings ({e}); run `make install`")

site_packages = os.path.dirname(list(mlir.__path__)[0])
mlir_bin = os.path.join(site_packages, "mlir", "bin")
llvm_bin = os.path.join(site_packages, "llvm", "bin")


def find_tidal_opt():
    # The console script beside the interpreter running lit (no pyenv shim in
    # between), else whatever `tidal-opt` PATH has.
    candidate = os.path.join(sysconfig.get_path("scripts"), "tidal-opt")
    if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
        return candidate
    return shutil.which("tidal-opt")


tidal_opt = find_tidal_opt()
if tidal_opt is None:
    lit_config.fatal("tidal-opt not found: install the package (`make install`)")
path = os.pathsep.join([mlir_bin, llvm_bin, os.path.dirname(tidal_opt),
                        config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["PATH"] = path
for tool in ("FileCheck", "not", "mlir-opt", "tidal-opt"):
    if shutil.which(tool, path=path) is None:
        lit_config.fatal(f"{tool} not found on the test PATH ({path})")

for var in ("PYTHONPATH", "HOME", "PYENV_ROOT", "PYENV_VERSION", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

try:
    from tidal.dialects import plugin_path
    tidal_plugin = plugin_path()
except Exception as e:  # noqa: BLE001 - any failure means a broken install
    lit_config.fatal(f"cannot locate Tidal's mlir-opt dialect plugin: {e}")

config.substitutions.append(("%tidal_plugin", tidal_plugin))
config.substitutions.append(("%python", sys.executable))
