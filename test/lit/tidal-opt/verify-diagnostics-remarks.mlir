// Remarks emitted by an upstream pass (the transform interpreter) are
// verified like errors; without --verify-diagnostics they are printed.
// RUN: tidal-opt %s --transform-interpreter --verify-diagnostics | FileCheck %s --check-prefix=OUT
// RUN: mlir-opt --load-dialect-plugin=%tidal_plugin %s --transform-interpreter --verify-diagnostics
// RUN: tidal-opt %s --transform-interpreter 2>&1 >/dev/null | FileCheck %s --check-prefix=PRINTED

// The output is still printed when the expected diagnostics were all seen.
// OUT: func.func @f

// PRINTED: verify-diagnostics-remarks.mlir:[[@LINE+2]]:3: remark: found a func
module attributes {transform.with_named_sequence} {
  func.func @f() { // expected-remark {{found a func}}
    return
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.debug.emit_remark_at %f, "found a func" : !transform.any_op
    transform.yield
  }
}
