// A failing Tidal pass fails the pipeline with a diagnostic at the op it
// names and exit status 1; a crashing one is reported as an internal error.
// The test passes come from a plugin (tidal.passes.register_pass).
// RUN: not tidal-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --test-fail-on-graph 2>&1 | FileCheck %s --check-prefix=FAILURE
// RUN: not tidal-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --pass-pipeline='builtin.module(cse,test-fail-on-graph{message="no graphs, please"},canonicalize)' 2>&1 | FileCheck %s --check-prefix=MESSAGE
// RUN: not tidal-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --test-emit-errors 2>&1 | FileCheck %s --check-prefix=EMITTED
// RUN: not tidal-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --test-crash 2>&1 | FileCheck %s --check-prefix=CRASH
// RUN: tidal-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --test-emit-errors --verify-diagnostics
// RUN: tidal-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --pass-pipeline='builtin.module(test-record-options{count=0x10 scale=2.5e-1 flag label="a b" sizes=1,2,3 names={x,y}})' | FileCheck %s --check-prefix=OPTIONS
// RUN: tidal-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --test-record-options | FileCheck %s --check-prefix=DEFAULTS
// RUN: not tidal-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --pass-pipeline='builtin.module(test-record-options{sizes=1,a})' 2>&1 | FileCheck %s --check-prefix=BAD-LIST
// RUN: not tidal-opt %s --load-pass-plugin=%S/Inputs/no_such_plugin.py 2>&1 | FileCheck %s --check-prefix=NO-PLUGIN

// FAILURE: pass-failures.mlir:[[@LINE+24]]:1: error: graphs are not welcome here
// FAILURE-NEXT: sdg.graph @graph dims [t < T] {
// FAILURE-NEXT: ^
// FAILURE-NOT: Traceback
// MESSAGE: pass-failures.mlir:[[@LINE+20]]:1: error: no graphs, please
// CRASH: error: internal error in pass 'test-crash': ZeroDivisionError: integer division or modulo by zero
// CRASH: tidal-opt: internal error in a Tidal pass (a bug, please report it):
// CRASH: Traceback
// OPTIONS: module attributes {test.options = "count=16 scale=0.25 flag=True label=a b sizes=[1, 2, 3] names=['x', 'y']"}
// DEFAULTS: module attributes {test.options = "count=1 scale=0.5 flag=False label=none sizes=[] names=[]"}
// BAD-LIST: error: invalid value '1,a' for option 'sizes' of pass 'test-record-options': expected an integer
// NO-PLUGIN: tidal-opt: error: cannot load pass plugin '{{.*}}no_such_plugin.py': FileNotFoundError

// EMITTED: pass-failures.mlir:[[@LINE+2]]:1: error: functions are suspicious
// EMITTED: pass-failures.mlir:[[@LINE+6]]:1: error: functions are suspicious
func.func @f() { // expected-error {{functions are suspicious}}
  return
}

// expected-error@below {{functions are suspicious}}
func.func @g() {
  return
}

sdg.graph @graph dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  sdg.output "x" %x[t] domain [t] : !tidal.tensor<[4], f32>
}
