"""`python -m tidal.dialects --plugin-path` prints the mlir-opt plugin's path."""
import argparse

from . import plugin_path

parser = argparse.ArgumentParser(prog="python -m tidal.dialects")
parser.add_argument("--plugin-path", action="store_true", help="print the dialect plugin's path")
args = parser.parse_args()
if args.plugin_path:
    print(plugin_path())
else:
    parser.print_help()
