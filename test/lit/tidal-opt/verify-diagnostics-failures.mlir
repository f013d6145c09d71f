// Each way --verify-diagnostics can fail is reported, and the run exits
// non-zero. Upstream mlir-opt prints the same report: mismatches as they
// happen, then the expectations nothing met, in file order (one verifier
// covers all the chunks).
// RUN: not tidal-opt %s --split-input-file --verify-diagnostics 2>&1 | FileCheck %s
// RUN: not mlir-opt --load-dialect-plugin=%tidal_plugin %s --split-input-file --verify-diagnostics 2>&1 | FileCheck %s
// RUN: not tidal-opt %s --split-input-file --verify-diagnostics=only-expected 2>&1 | FileCheck %s --check-prefix=ONLY

// An expectation nothing meets (valid IR).
func.func @valid() {
  // expected-error@+1 {{never emitted}}
  return
}

// -----

// A diagnostic nobody expected.
// CHECK: verify-diagnostics-failures.mlir:[[@LINE+3]]:3: error: unexpected error: custom op 'retur' is unknown
// ONLY-NOT: unexpected error
func.func @unexpected() {
  retur
}

// -----

// The right message on the right line with the wrong severity.
// CHECK: verify-diagnostics-failures.mlir:[[@LINE+2]]:6: error: 'error' diagnostic emitted when expecting a 'warning'
func.func @near_miss() {
  // expected-warning@+1 {{custom op 'retur' is unknown}}
  retur
}

// -----

// The right message on the wrong line: both sides are reported.
// CHECK: verify-diagnostics-failures.mlir:[[@LINE+3]]:3: error: unexpected error: custom op 'retur' is unknown
func.func @wrong_line() {
  // expected-error@+2 {{custom op 'retur' is unknown}}
  retur
}

// Unmet expectations come last.
// CHECK: verify-diagnostics-failures.mlir:[[@LINE-32]]:6: error: expected error "never emitted" was not produced
// CHECK: verify-diagnostics-failures.mlir:[[@LINE-15]]:6: error: expected warning "custom op 'retur' is unknown" was not produced
// CHECK: verify-diagnostics-failures.mlir:[[@LINE-7]]:6: error: expected error "custom op 'retur' is unknown" was not produced
// ONLY: verify-diagnostics-failures.mlir:[[@LINE-35]]:6: error: expected error "never emitted" was not produced
