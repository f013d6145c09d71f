// sdg-schedule's loop-fusion post-pass (lowering/loop_fusion.py). isl without
// proximity (and not in whole-component mode) puts every operator in a loop of
// its own; the post-pass fuses a loop into the loop it reads when a constant
// shift runs every value it reads first: n-step returns (`r[t:min(t + 3, T)]`)
// run 2 steps behind their rewards in one loop. Monte-Carlo returns
// (`r[t:T]`) read the last reward at every t, a distance that grows with T:
// they stay in a loop after the rewards' (the rewards' own loops, at shift 0,
// are fused). `fuse-shifted=false` gives isl's loops.
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-schedule{whole-component=false proximity=false},sdg-lower-to-scf)' | FileCheck %s --check-prefix=FUSE
// RUN: tidal-opt %s --pass-pipeline='builtin.module(sdg-schedule{whole-component=false proximity=false fuse-shifted=false},sdg-lower-to-scf)' | FileCheck %s --check-prefix=APART

!v = !tidal.tensor<[4], f32>

// FUSE-LABEL: func.func @nstep_run(
// FUSE:         scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step
// FUSE-NEXT:      call @nstep_op0(%[[P]])
// FUSE-NEXT:      call @nstep_op1(%[[P]])
// FUSE-NEXT:    }
// FUSE:         %[[C2:.*]] = arith.constant 2 : index
// FUSE-NEXT:    scf.for %[[C:.*]] = %[[C2]] to %{{.*}} step
// FUSE-NEXT:      call @nstep_op0(%[[C]])
// FUSE-NEXT:      call @nstep_op1(%[[C]])
// FUSE-NEXT:      %[[B:.*]] = arith.subi %[[C]], %[[C2]]
// FUSE-NEXT:      call @nstep_op2(%[[B]])
// FUSE-NEXT:      call @nstep_op3(%[[B]])
// FUSE-NEXT:    }
// FUSE:         scf.for
// FUSE-NOT:       call @nstep_op1
// FUSE:           call @nstep_op2(
// FUSE-NEXT:      call @nstep_op3(
// FUSE-NEXT:    }
// FUSE-NEXT:    return

// APART-LABEL: func.func @nstep_run(
// APART:         scf.for
// APART-NEXT:      call @nstep_op0(
// APART-NEXT:    }
// APART:         scf.for
// APART-NEXT:      call @nstep_op1(
// APART-NEXT:    }
// APART:         scf.for
// APART-NEXT:      call @nstep_op2(
// APART-NEXT:    }
// APART:         scf.for
// APART-NEXT:      call @nstep_op3(
// APART-NEXT:    }
sdg.graph @nstep dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %r = sdg.unary sigmoid %x[t] domain [t] : (!v) -> !v
  %g = sdg.reduce sum [0] %r[t:min(t + 3, T)] domain [t] : (!v) -> !v
  sdg.output "g" %g[t] domain [t] : !v
}

// FUSE-LABEL: func.func @mc_run(
// FUSE:         scf.for %[[A:.*]] = %{{.*}} to %{{.*}} step
// FUSE-NEXT:      call @mc_op0(%[[A]])
// FUSE-NEXT:      call @mc_op1(%[[A]])
// FUSE-NEXT:    }
// FUSE:         scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// FUSE-NEXT:      call @mc_op2(%[[B]])
// FUSE-NEXT:      call @mc_op3(%[[B]])
// FUSE-NEXT:    }
// FUSE-NEXT:    return
sdg.graph @mc dims [t < T] {
  %x = sdg.input "x" domain [t] : !v
  %r = sdg.unary sigmoid %x[t] domain [t] : (!v) -> !v
  %g = sdg.reduce sum [0] %r[t:T] domain [t] : (!v) -> !v
  sdg.output "g" %g[t] domain [t] : !v
}
