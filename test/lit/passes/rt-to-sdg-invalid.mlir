// rt-to-sdg rejects what the rt verifiers cannot see: an error at the
// offending op, a failed pass, no crash.
// RUN: tidal-opt %s --split-input-file --rt-to-sdg --verify-diagnostics
// RUN: not tidal-opt %s --split-input-file --rt-to-sdg 2>&1 | FileCheck %s
// CHECK-NOT: Traceback
// CHECK-NOT: internal error

!v = !tidal.tensor<[4], f32>

// CHECK: rt-to-sdg-invalid.mlir:[[@LINE+7]]:3: error: definition index component 't * 2' for dimension 't' is not invertible
rt.program @not_invertible dims [t < T] {
  %x = rt.input "x" domain [t] : !v
  %s = rt.recurrent domain [t] : !v
  %x0 = rt.index %x[0] domain [] : (!v) -> !v
  rt.define %s[0] = %x0 : !v, !v
  // expected-error@+1 {{definition index component 't * 2' for dimension 't' is not invertible: expected 't + k' (k an integer constant) or an expression without steps}}
  rt.define %s[t * 2] = %x : !v, !v
  rt.output "s" %s : !v
}

// -----

!v = !tidal.tensor<[4], f32>

rt.program @swapped_dims dims [i < I, t < T] {
  %x = rt.input "x" domain [i, t] : !v
  %s = rt.recurrent domain [i, t] : !v
  // expected-error@+1 {{definition index component 't' for dimension 'i' is not invertible}}
  rt.define %s[t, i] = %x : !v, !v
  rt.output "s" %s : !v
}

// -----

!v = !tidal.tensor<[4], f32>

rt.program @symbolic_shift dims [t < T] {
  %x = rt.input "x" domain [t] : !v
  %s = rt.recurrent domain [t] : !v
  // expected-error@+1 {{definition index component 't + T' for dimension 't' is not invertible}}
  rt.define %s[t + T] = %x : !v, !v
  rt.output "s" %s : !v
}

// -----

!v = !tidal.tensor<[4], f32>

// CHECK: rt-to-sdg-invalid.mlir:[[@LINE+5]]:8: error: operand 0 has domain [t], which is not contained in the op's domain []
rt.program @operand_outside_domain dims [t < T] {
  %x = rt.input "x" domain [t] : !v
  // The frontend unites domains; an op cannot read a tensor that varies
  // with a dim it does not have.
  %y = rt.unary exp %x domain [] : (!v) -> !v // expected-error {{operand 0 has domain [t], which is not contained in the op's domain [] (missing 't')}}
  rt.output "y" %y : !v
}

// -----

!v = !tidal.tensor<[4], f32>

rt.program @no_case dims [t < T] {
  // expected-error@+1 {{recurrent tensor has no rt.define case}}
  %s = rt.recurrent domain [t] : !v
  rt.output "s" %s : !v
}

// -----

!v = !tidal.tensor<[4], f32>

rt.program @ambiguous_value dims [t < T] {
  %x = rt.input "x" domain [t] : !v
  %s = rt.recurrent domain [t] : !v
  // s[0] = x would define s[0] once for every t.
  // expected-error@+1 {{the defining value varies with 't', in which the definition index is constant: the case is ambiguous}}
  rt.define %s[0] = %x : !v, !v
  rt.output "s" %s : !v
}

// -----

!v = !tidal.tensor<[4], f32>

rt.program @ambiguous_condition dims [t < T] {
  %c = rt.constant dense<1.0> : tensor<4xf32> domain [] : !v
  %s = rt.recurrent domain [t] : !v
  // expected-error@+1 {{the condition uses 't', in which the definition index is constant: the case is ambiguous}}
  rt.define %s[0] if <t gt 2> = %c : !v, !v
  rt.output "s" %s : !v
}

// -----

!v = !tidal.tensor<[4], f32>

rt.program @value_outside_domain dims [i < I, t < T] {
  %x = rt.input "x" domain [i, t] : !v
  %s = rt.recurrent domain [t] : !v
  // expected-error@+1 {{the defining value has domain [i, t], which is not contained in the recurrent tensor's domain [t]}}
  rt.define %s[t] = %x : !v, !v
  rt.output "s" %s : !v
}

// -----

!v = !tidal.tensor<[4], f32>

rt.program @output_condition dims [t < T] {
  %x = rt.input "x" domain [t] : !v
  %x0 = rt.index %x[0] domain [] : (!v) -> !v
  // expected-error@+1 {{condition 't eq 0' uses step 't', which is not in the domain []}}
  rt.output "x0" %x0 if <t eq 0> : !v
}
// CHECK-NOT: Traceback

// -----

!v = !tidal.tensor<[4], f32>

// A definition condition must be boolean (it used to be an internal error).
rt.program @int_condition dims [t < T] {
  %x = rt.input "x" domain [t] : !v
  %s = rt.recurrent domain [t] : !v
  // expected-error @+1 {{condition 't + 1' is an int expression; a condition must be boolean}}
  rt.define %s[t] if <t + 1> = %x : !v, !v
  rt.output "s" %s : !v
}

// -----

!v = !tidal.tensor<[4], f32>

rt.program @int_output_condition dims [t < T] {
  %x = rt.input "x" domain [t] : !v
  // expected-error @+1 {{condition 't' is an int expression; a condition must be boolean}}
  rt.output "x" %x if <t> : !v
}

// -----

!b = !tidal.tensor<[], i1>

rt.program @stop_without_dim dims [t < T] {
  %c = rt.input "c" domain [] : !b
  // expected-error@+1 {{the stop condition has no temporal dim (its domain is [])}}
  rt.stop_when %c : !b
}
