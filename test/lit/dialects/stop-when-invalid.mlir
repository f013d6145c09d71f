// The stop ops' verifiers: the condition is one boolean per point, and the sdg
// op has a dim to stop.
// RUN: tidal-opt %s --split-input-file --verify-diagnostics

rt.program @not_bool dims [t < T] {
  %x = rt.input "x" domain [t] : !tidal.tensor<[], f32>
  // expected-error@+1 {{condition must be a boolean scalar (shape [], i1)}}
  rt.stop_when %x : !tidal.tensor<[], f32>
}

// -----

sdg.graph @not_scalar dims [t < T] {
  %c = sdg.input "c" domain [t] : !tidal.tensor<[4], i1>
  // expected-error@+1 {{condition must be a boolean scalar (shape [], i1)}}
  sdg.stop_when %c[t] domain [t] : !tidal.tensor<[4], i1>
}

// -----

sdg.graph @no_dim dims [t < T] {
  %c = sdg.input "c" domain [] : !tidal.tensor<[], i1>
  // expected-error@+1 {{needs a domain of at least one dim}}
  sdg.stop_when %c[] domain [] : !tidal.tensor<[], i1>
}
