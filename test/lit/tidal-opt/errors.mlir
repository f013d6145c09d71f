// User errors give mlir-opt style diagnostics and exit status 1, never an
// abort (`not` fails on a crash) or a Python traceback.
// RUN: not tidal-opt %s --pass-pipeline='builtin.module(no-such-pass)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not tidal-opt %s --pass-pipeline='builtin.module(cse,func.func(canonicalize,no-such-pass))' 2>&1 | FileCheck %s --check-prefix=UNKNOWN-NESTED
// RUN: not tidal-opt %s --pass-pipeline='builtin.module(sdg-dce{keep-udfs=maybe})' 2>&1 | FileCheck %s --check-prefix=BAD-VALUE
// RUN: not tidal-opt %s --pass-pipeline='builtin.module(sdg-dce{keep_udf=true})' 2>&1 | FileCheck %s --check-prefix=BAD-OPTION
// RUN: not tidal-opt %s --pass-pipeline='builtin.module(canonicalize{max-iterations=abc})' 2>&1 | FileCheck %s --check-prefix=BAD-UPSTREAM
// RUN: not tidal-opt %s --pass-pipeline='builtin.module(func.func(sdg-dce))' 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not tidal-opt %s --pass-pipeline='builtin.module(cse' 2>&1 | FileCheck %s --check-prefix=UNBALANCED
// RUN: not tidal-opt %s --no-such-flag 2>&1 | FileCheck %s --check-prefix=FLAG
// RUN: not tidal-opt %s --pass-pipeline=cse --canonicalize 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not tidal-opt %t.does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not tidal-opt %s --sdg-dce 2>&1 | FileCheck %s --check-prefix=MALFORMED
// RUN: not tidal-opt - --sdg-dce < %s 2>&1 | FileCheck %s --check-prefix=STDIN
// RUN: not tidal-opt %s --no-implicit-module 2>&1 | FileCheck %s --check-prefix=MALFORMED

// UNKNOWN: <pass-pipeline>:1:16: error: 'no-such-pass' does not refer to a registered pass or pass pipeline
// UNKNOWN-NEXT: builtin.module(no-such-pass)
// UNKNOWN-NEXT: {{^}}               ^
// UNKNOWN-NOT: Traceback

// UNKNOWN-NESTED: <pass-pipeline>:1:43: error: 'no-such-pass' does not refer to a registered pass or pass pipeline

// BAD-VALUE: <pass-pipeline>:1:24: error: invalid value 'maybe' for option 'keep-udfs' of pass 'sdg-dce': expected a boolean (true/false/1/0)

// BAD-OPTION: error: no such option 'keep_udf' for pass 'sdg-dce'; valid options: keep-udfs=<bool>

// BAD-UPSTREAM: error: failed to add `canonicalize` with options `max-iterations=abc`{{.*}}'abc' value invalid

// NESTED: <pass-pipeline>:1:26: error: Tidal pass 'sdg-dce' runs on the top-level 'builtin.module' only and cannot be nested under 'func.func'

// UNBALANCED: error: encountered unbalanced parentheses while parsing pipeline

// FLAG: tidal-opt: Unknown command line argument '--no-such-flag'.

// BOTH: '--pass-pipeline' option can't be used with individual pass options

// MISSING: error: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory

// MALFORMED: errors.mlir:[[@LINE+5]]:22: error: expected SSA operand
// MALFORMED-NEXT: {{^}}  %1 = arith.addi %0, : i32
// MALFORMED-NEXT: {{^}}                     ^
// MALFORMED-NOT: Traceback
// STDIN: <stdin>:[[@LINE+1]]:22: error: expected SSA operand
  %1 = arith.addi %0, : i32
