// Verifier errors of the position-valued ops (reduce argmax/argmin, argsort), in rt and sdg.
// RUN: tidal-opt %s --split-input-file --verify-diagnostics
// RUN: mlir-opt --load-dialect-plugin=%tidal_plugin %s --split-input-file --verify-diagnostics

rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4, 4], f32>
  // expected-error@+1 {{argmax reduces exactly one dimension}}
  %r = rt.reduce argmax [0, 1] %a domain [] : (!tidal.tensor<[4, 4], f32>) -> !tidal.tensor<[], i64>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{argmin result element type must be i64}}
  %r = rt.reduce argmin [0] %a domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{dimension 1 is out of range for rank 1}}
  %r = rt.reduce argmax [1] %a domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[], i64>
}

// -----
sdg.graph @g dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{argmax reduces exactly one dimension}}
  %r = sdg.reduce argmax [] %a[] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], i64>
}

// -----
sdg.graph @g dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{argmax result element type must be i64}}
  %r = sdg.reduce argmax [0] %a[] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[], i32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4, 3], f32>
  // expected-error@+1 {{dimension 2 is out of range for rank 2}}
  %r = rt.argsort 2 %a domain [] : (!tidal.tensor<[4, 3], f32>) -> !tidal.tensor<[4, 3], i64>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4, 3], f32>
  // expected-error@+1 {{result element type must be i64}}
  %r = rt.argsort 1 descending %a domain [] : (!tidal.tensor<[4, 3], f32>) -> !tidal.tensor<[4, 3], i32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4, 3], f32>
  // expected-error@+1 {{result shape must equal the operand's}}
  %r = rt.argsort 1 %a domain [] : (!tidal.tensor<[4, 3], f32>) -> !tidal.tensor<[4, 2], i64>
}

// -----
sdg.graph @g dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{dimension 2 is out of range for rank 2}}
  %r = sdg.argsort 2 %x[0:t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[t + 1, 4], i64>
}
