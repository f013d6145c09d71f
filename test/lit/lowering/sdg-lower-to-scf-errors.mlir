// sdg-lower-to-scf needs the schedule that sdg-schedule attaches.
// RUN: tidal-opt %s --load-pass-plugin=tidal.lowering.passes --verify-diagnostics --sdg-lower-to-scf
// RUN: not tidal-opt %s --load-pass-plugin=tidal.lowering.passes --sdg-lower-to-scf 2>&1 | FileCheck %s

// CHECK: error: sdg.graph @unscheduled has no tidal.schedule attribute: run sdg-schedule first
// expected-error @+1 {{run sdg-schedule first}}
sdg.graph @unscheduled dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  sdg.output "x" %x[t] domain [t] : !tidal.tensor<[4], f32>
}
