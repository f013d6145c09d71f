// Chunks are processed independently and their outputs joined by the split
// marker; a chunk that fails prints nothing but the others still run;
// diagnostics carry the line numbers of this file. (The marker is matched as
// {{^//}} {{-----$}} below: its plain text would split this file.)
// RUN: not tidal-opt %s --split-input-file --sdg-dce 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t.err
// RUN: not tidal-opt %s -split-input-file --sdg-dce -o %t.out 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not test -e %t.out

// CHECK:      module {
// CHECK-NEXT:   func.func @first
// CHECK:      {{^}}}
// CHECK-EMPTY:
// CHECK-NEXT: {{^//}} {{-----$}}
// CHECK-NEXT: {{^//}} {{-----$}}
// CHECK-NEXT: module {
// CHECK-NEXT:   sdg.graph @third
// CHECK-NEXT:     sdg.input "x"
// CHECK-NEXT:     sdg.output "x"
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: {{^//}} {{-----$}}
// CHECK-NEXT: module {
// CHECK-NEXT:   func.func @fourth

func.func @first() {
  return
}

// -----

func.func @second() {
  // ERR: split-input-file.mlir:[[@LINE+1]]:3: error: custom op 'retur' is unknown
  retur
}

// -----

sdg.graph @third dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %e = sdg.unary exp %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "x" %x[t] domain [t] : !tidal.tensor<[4], f32>
}

// -----
func.func @fourth() {
  return
}
