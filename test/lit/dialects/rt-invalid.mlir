// Every verifier of the rt dialect (and of the shared tensor op set) rejects
// bad IR with a clear message.
// RUN: tidal-opt %s --split-input-file --verify-diagnostics
// RUN: mlir-opt --load-dialect-plugin=%tidal_plugin %s --split-input-file --verify-diagnostics

// expected-error@+1 {{must be nested in an rt.program or sdg.graph}}
%a = rt.full 0.0 domain [] : !tidal.tensor<[4], f32>

// -----
rt.program @p dims [t < T] {
  // expected-error@+1 {{domain component 'k' is not a temporal dimension of the enclosing program (declared: t)}}
  %a = rt.full 0.0 domain [k] : !tidal.tensor<[4], f32>
}

// -----
rt.program @p dims [t < T] {
  // expected-error@+1 {{domain lists dimension 't' twice}}
  %a = rt.full 0.0 domain [t, t] : !tidal.tensor<[4], f32>
}

// -----
rt.program @p dims [t < T, i < I] {
  // expected-error@+1 {{result shape 'i + 1' uses 'i', which is neither a step of the op's domain nor a bound}}
  %a = rt.full 0.0 domain [t] : !tidal.tensor<[i + 1], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{expects 1 operands, got 2}}
  %b = "rt.unary"(%a, %a) <{kind = 3 : i32, domain = #tidal.index<[]>}> : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{result element type must equal the operand's}}
  %b = rt.unary exp %a domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f16>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{result shape must equal the operand's}}
  %b = rt.unary exp %a domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[5], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4], f32>
  %b = rt.full 0.0 domain [] : !tidal.tensor<[4], i32>
  // expected-error@+1 {{operand element types differ ('f32' vs 'i32'): insert a cast}}
  %c = rt.binary add %a, %b domain [] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], i32>) -> !tidal.tensor<[4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{result element type must be 'i1'}}
  %c = rt.binary lt %a, %a domain [] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4], f32>
  %b = rt.full 0.0 domain [] : !tidal.tensor<[3], f32>
  // expected-error@+1 {{operand dimension '3' cannot broadcast to result dimension '4'}}
  %c = rt.binary add %a, %b domain [] : (!tidal.tensor<[4], f32>, !tidal.tensor<[3], f32>) -> !tidal.tensor<[4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{result rank 2 does not match broadcast rank 1}}
  %c = rt.binary add %a, %a domain [] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[1, 4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{condition must have element type i1}}
  %c = rt.where %a, %a, %a domain [] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
}

// -----
rt.program @p dims [t < T] {
  %c = rt.full 0.0 domain [] : !tidal.tensor<[4], i1>
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4], f32>
  %b = rt.full 0.0 domain [] : !tidal.tensor<[4], i32>
  // expected-error@+1 {{branches and result must share one element type}}
  %r = rt.where %c, %a, %b domain [] : (!tidal.tensor<[4], i1>, !tidal.tensor<[4], f32>, !tidal.tensor<[4], i32>) -> !tidal.tensor<[4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{dimension 1 is out of range for rank 1}}
  %r = rt.reduce sum [1] %a domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4, 4], f32>
  // expected-error@+1 {{reduces dimension 0 twice}}
  %r = rt.reduce sum [0, 0] %a domain [] : (!tidal.tensor<[4, 4], f32>) -> !tidal.tensor<[], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4, 4], f32>
  // expected-error@+1 {{result rank must be 2}}
  %r = rt.reduce sum [0] keepdim %a domain [] : (!tidal.tensor<[4, 4], f32>) -> !tidal.tensor<[4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{dimension 1 is out of range for rank 1}}
  %r = rt.scan cumsum 1 %a domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{result shape must equal the operand's}}
  %r = rt.flip 0 %a domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[2], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[], f32>
  // expected-error@+1 {{operands must have rank >= 1}}
  %r = rt.matmul %a, %a domain [] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[2, 3], f32>
  // expected-error@+1 {{contracted dimensions differ: '3' vs '2'}}
  %r = rt.matmul %a, %a domain [] : (!tidal.tensor<[2, 3], f32>, !tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[2, 3], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[3, 3], f32>
  // expected-error@+1 {{operands and result must share one element type}}
  %r = rt.matmul %a, %a domain [] : (!tidal.tensor<[3, 3], f32>, !tidal.tensor<[3, 3], f32>) -> !tidal.tensor<[3, 3], f16>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[2, 3], f32>
  // expected-error@+1 {{cannot reshape 6 elements into 4}}
  %r = rt.reshape %a domain [] : (!tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[2, 3], f32>
  // expected-error@+1 {{perm must be a permutation of the operand's 2 dimensions}}
  %r = rt.permute [0, 0] %a domain [] : (!tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[2, 3], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[2, 3], f32>
  // expected-error@+1 {{result dimension 0 must be operand dimension 1}}
  %r = rt.permute [1, 0] %a domain [] : (!tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[2, 3], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{operand dimension '2' cannot broadcast to result dimension '3'}}
  %r = rt.expand %a domain [] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[4, 3], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[2, 2], f32>
  // expected-error@+1 {{cannot expand rank 2 to the lower rank 1}}
  %r = rt.expand %a domain [] : (!tidal.tensor<[2, 2], f32>) -> !tidal.tensor<[2], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[2, 3], f32>
  // expected-error@+1 {{can only squeeze a dimension of size 1}}
  %r = rt.squeeze 0 %a domain [] : (!tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[3], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[1, 3], f32>
  // expected-error@+1 {{result rank must be one less than the operand's}}
  %r = rt.squeeze 0 %a domain [] : (!tidal.tensor<[1, 3], f32>) -> !tidal.tensor<[1, 3], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[3], f32>
  // expected-error@+1 {{dimension 2 is out of range for rank 1}}
  %r = rt.unsqueeze 2 %a domain [] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3, 1], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[3], f32>
  // expected-error@+1 {{result rank must be one more than the operand's}}
  %r = rt.unsqueeze 0 %a domain [] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[T], f32>
  // expected-error@+1 {{start 't' uses 't', which is neither a step of the op's domain nor a bound}}
  %r = rt.slice 0 at <t> %a domain [] : (!tidal.tensor<[T], f32>) -> !tidal.tensor<[1], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[T, 4], f32>
  // expected-error@+1 {{result rank must be one less than the operand's}}
  %r = rt.take 0 at <t> %a domain [t] : (!tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[1, 4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[T, 4], f32>
  // expected-error@+1 {{index 't + 1' uses 't', which is neither a step of the op's domain nor a bound}}
  %r = rt.take 0 at <t + 1> %a domain [] : (!tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[5, 4], f32>
  %i = rt.full 0.0 domain [] : !tidal.tensor<[2, 2], i64>
  // expected-error@+1 {{index operand must have rank 0 or 1}}
  %r = rt.index_select 0 %a, %i domain [] : (!tidal.tensor<[5, 4], f32>, !tidal.tensor<[2, 2], i64>) -> !tidal.tensor<[2, 2, 4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[5, 4], f32>
  %i = rt.full 0.0 domain [] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{index operand must have an integer element type}}
  %r = rt.index_select 0 %a, %i domain [] : (!tidal.tensor<[5, 4], f32>, !tidal.tensor<[2], f32>) -> !tidal.tensor<[2, 4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[5, 4], f32>
  %i = rt.full 0.0 domain [] : !tidal.tensor<[2], i64>
  // expected-error@+1 {{result rank must be 2}}
  %r = rt.index_select 0 %a, %i domain [] : (!tidal.tensor<[5, 4], f32>, !tidal.tensor<[2], i64>) -> !tidal.tensor<[4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[5, 4], f32>
  %i = rt.full 0.0 domain [] : !tidal.tensor<[2], i64>
  // expected-error@+1 {{source and index must have the same rank}}
  %r = rt.gather 0 %a, %i domain [] : (!tidal.tensor<[5, 4], f32>, !tidal.tensor<[2], i64>) -> !tidal.tensor<[2], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[5, 4], f32>
  %i = rt.full 0.0 domain [] : !tidal.tensor<[5, 1], i64>
  // expected-error@+1 {{result shape must equal the index shape}}
  %r = rt.gather 1 %a, %i domain [] : (!tidal.tensor<[5, 4], f32>, !tidal.tensor<[5, 1], i64>) -> !tidal.tensor<[5, 4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[5, 4], f32>
  %i = rt.full 0.0 domain [] : !tidal.tensor<[5, 1], i64>
  %s = rt.full 0.0 domain [] : !tidal.tensor<[5, 2], f32>
  // expected-error@+1 {{index and source must have the same shape}}
  %r = rt.scatter_add 1 %a, %i, %s domain [] : (!tidal.tensor<[5, 4], f32>, !tidal.tensor<[5, 1], i64>, !tidal.tensor<[5, 2], f32>) -> !tidal.tensor<[5, 4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[5, 4], f32>
  %i = rt.full 0.0 domain [] : !tidal.tensor<[5, 1], i64>
  %s = rt.full 0.0 domain [] : !tidal.tensor<[5, 1], f32>
  // expected-error@+1 {{result type must equal the destination type}}
  %r = rt.scatter_add 1 %a, %i, %s domain [] : (!tidal.tensor<[5, 4], f32>, !tidal.tensor<[5, 1], i64>, !tidal.tensor<[5, 1], f32>) -> !tidal.tensor<[5, 1], f32>
}

// -----
rt.program @p dims [t < T] {
  // expected-error@+1 {{needs at least one operand}}
  %r = "rt.concat"() <{dim = 0 : i64, domain = #tidal.index<[]>}> : () -> !tidal.tensor<[4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[2, 4], f32>
  %b = rt.full 0.0 domain [] : !tidal.tensor<[2, 3], f32>
  // expected-error@+1 {{operands differ in dimension 1, which is not concatenated}}
  %r = rt.concat 0 %a, %b domain [] : (!tidal.tensor<[2, 4], f32>, !tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[4, 4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[2, 4], f32>
  %b = rt.full 0.0 domain [] : !tidal.tensor<[2, 4], i32>
  // expected-error@+1 {{operands must share rank and element type}}
  %r = rt.concat 0 %a, %b domain [] : (!tidal.tensor<[2, 4], f32>, !tidal.tensor<[2, 4], i32>) -> !tidal.tensor<[4, 4], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{after 't' uses 't', which is neither a step of the op's domain nor a bound}}
  %r = rt.pad 0 <0> <t> value 0.0 %a domain [] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[3], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{dimension 1 is out of range for rank 1}}
  %r = rt.pad 1 <0> <1> value 0.0 %a domain [] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[3], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{result shape must equal the operand's}}
  %r = rt.cast %a domain [] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[3], i32>
}

// -----
rt.program @p dims [t < T] {
  // expected-error@+1 {{callee name must not be empty}}
  %r = rt.udf ""() domain [] : () -> !tidal.tensor<[2], f32>
}

// -----
rt.program @p dims [t < T] {
  // expected-error@+1 {{value element type 'f32' differs from the result's 'i32'}}
  %r = rt.constant dense<1.0> : tensor<2xf32> domain [] : !tidal.tensor<[2], i32>
}

// -----
rt.program @p dims [t < T] {
  // expected-error@+1 {{value shape must equal the result's static shape}}
  %r = rt.constant dense<1.0> : tensor<2xf32> domain [] : !tidal.tensor<[T], f32>
}

// -----
rt.program @p dims [t < T] {
  // expected-error@+1 {{dimension 1 is out of range for rank 1}}
  %r = rt.iota 1 domain [t] : !tidal.tensor<[t + 1], i64>
}

// -----
rt.program @p dims [t < T] {
  // expected-error@+1 {{result must be a scalar tensor}}
  %r = rt.symbol_value <t> domain [t] : !tidal.tensor<[1], i64>
}

// -----
rt.program @p dims [t < T] {
  // expected-error@+1 {{expression 't' uses 't', which is neither a step of the op's domain nor a bound}}
  %r = rt.symbol_value <t> domain [] : !tidal.tensor<[], i64>
}

// -----
rt.program @p dims [t < T] {
  // expected-error@+1 {{element type must be an integer, index or float type, got 'tensor<2xf32>'}}
  %r = rt.full 0.0 domain [] : !tidal.tensor<[4], tensor<2xf32>>
}

// -----
rt.program @p dims [t < T] {
  // expected-error@+1 {{shape dimension 't:T' must be an expression, not a slice}}
  %r = rt.full 0.0 domain [t] : !tidal.tensor<[t:T], f32>
}

// -----
rt.program @p dims [t < T] {
  // expected-error@+1 {{'floordiv' is not a valid symbol name}}
  %r = rt.full 0.0 domain [t] : !tidal.tensor<[floordiv], f32>
}

// -----
rt.program @p dims [t < T] {
  // expected-error@+1 {{select takes exactly 3 arguments (condition, then, else)}}
  %r = rt.full 0.0 domain [t] : !tidal.tensor<[select(t, 1)], f32>
}

// -----
rt.program @p dims [t < T] {
  // expected-error@+1 {{min takes at least 2 arguments}}
  %r = rt.full 0.0 domain [t] : !tidal.tensor<[min(t)], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{slice step must be a positive integer}}
  %b = rt.index %a[0:T:0] domain [] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[2], f32>
}

// -----
rt.program @p dims [t < T] {
  %a = rt.full 0.0 domain [] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{target must be declared by rt.recurrent}}
  rt.define %a[] = %a : !tidal.tensor<[2], f32>, !tidal.tensor<[2], f32>
}
// -----
rt.program @p dims [t < T] {
  %s = rt.recurrent domain [t] : !tidal.tensor<[2], f32>
  %a = rt.full 0.0 domain [] : !tidal.tensor<[3], f32>
  // expected-error@+1 {{value type '!tidal.tensor<[3], f32>' differs from the target type '!tidal.tensor<[2], f32>'}}
  rt.define %s[0] = %a : !tidal.tensor<[2], f32>, !tidal.tensor<[3], f32>
}
// -----
rt.program @p dims [t < T] {
  %s = rt.recurrent domain [t] : !tidal.tensor<[2], f32>
  %a = rt.full 0.0 domain [] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{a definition case indexes points, not slices: '0:2'}}
  rt.define %s[0:2] = %a : !tidal.tensor<[2], f32>, !tidal.tensor<[2], f32>
}
// -----
rt.program @p dims [t < T, i < I] {
  %s = rt.recurrent domain [t] : !tidal.tensor<[2], f32>
  %a = rt.full 0.0 domain [] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{definition index has 2 components but the indexed tensor's domain has 1 dimensions}}
  rt.define %s[0, 0] = %a : !tidal.tensor<[2], f32>, !tidal.tensor<[2], f32>
}
// -----
rt.program @p dims [t < T, i < I] {
  %s = rt.recurrent domain [t] : !tidal.tensor<[2], f32>
  %a = rt.full 0.0 domain [] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{condition 'k gt 0' uses 'k', which is neither a step of the op's domain nor a bound}}
  rt.define %s[0] if <k gt 0> = %a : !tidal.tensor<[2], f32>, !tidal.tensor<[2], f32>
}
// -----
rt.program @p dims [t < T] {
  %x = rt.input "x" domain [t] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{index has 0 components but the indexed tensor's domain has 1 dimensions}}
  %r = rt.index %x[] domain [] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[2], f32>
}
// -----
rt.program @p dims [t < T, i < I] {
  %x = rt.input "x" domain [t] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{index 'i' uses 'i', which is neither a step of the op's domain nor a bound}}
  %r = rt.index %x[i] domain [t] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[2], f32>
}
// -----
rt.program @p dims [t < T] {
  %x = rt.input "x" domain [t] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{condition 'i eq 0' uses 'i', which is neither a step of the op's domain nor a bound}}
  rt.output "x" %x if <i eq 0> : !tidal.tensor<[2], f32>
}
// -----
// expected-error@+1 {{dimension name 't' is used twice}}
rt.program @p dims [t < T, t < I] {
}
// -----
// expected-error@+1 {{needs one bound per step}}
"rt.program"() <{sym_name = "p", steps = ["t"], bounds = []}> ({
^bb0:
}) : () -> ()
// -----
// expected-error@+1 {{'t-1' is not a valid dimension name}}
"rt.program"() <{sym_name = "p", steps = ["t-1"], bounds = ["T"]}> ({
^bb0:
}) : () -> ()

// -----
rt.program @p dims [t < T] {
  // expected-error@+1 {{shape dimension must be non-negative, got -2}}
  %r = rt.full 0.0 domain [] : !tidal.tensor<[-2], f32>
}

// -----
rt.program @p dims [t < T] {
  // expected-error@+1 {{a parameter's shape must be static (dimension 0 is not)}}
  %w = rt.param "W" domain [] : !tidal.tensor<[T, 4], f32>
}

// -----
rt.program @p dims [] {
  // expected-error@+1 {{value shape must equal the result's static shape}}
  %w = rt.param "W" dense<1.0> : tensor<3xf32> domain [] : !tidal.tensor<[4], f32>
}
