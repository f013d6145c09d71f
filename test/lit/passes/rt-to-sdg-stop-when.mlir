// rt-to-sdg turns rt.stop_when into sdg.stop_when over its condition's domain,
// reading it through the condition's index (composed); sdg-dce keeps it (a root,
// with what it reads). A condition with no temporal dim: rt-to-sdg-invalid.mlir.
// RUN: tidal-opt %s --split-input-file --rt-to-sdg | FileCheck %s
// RUN: tidal-opt %s --split-input-file --rt-to-sdg --sdg-dce | FileCheck %s --check-prefix=DCE

!b = !tidal.tensor<[], i1>

// CHECK-LABEL: sdg.graph @shifted
// CHECK: %[[C:.*]] = sdg.input "c" domain [t]
// CHECK: sdg.stop_when %[[C]][t - 1] domain [t] : !tidal.tensor<[], i1>
// DCE-LABEL: sdg.graph @shifted
// DCE: sdg.input "c"
// DCE: sdg.stop_when
rt.program @shifted dims [t < T] {
  %c = rt.input "c" domain [t] : !b
  %p = rt.index %c[t - 1] domain [t] : (!b) -> !b
  rt.stop_when %p : !b
}

