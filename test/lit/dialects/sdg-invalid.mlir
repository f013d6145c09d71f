// Every verifier of the sdg dialect (and of the shared tensor op set, whose
// operands here carry dependence expressions) rejects bad IR.
// RUN: tidal-opt %s --split-input-file --verify-diagnostics
// RUN: mlir-opt --load-dialect-plugin=%tidal_plugin %s --split-input-file --verify-diagnostics

// expected-error@+1 {{must be nested in an rt.program or sdg.graph}}
%a = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>

// -----
sdg.graph @p dims [t < T] {
  // expected-error@+1 {{domain component 'k' is not a temporal dimension of the enclosing program (declared: t)}}
  %a = sdg.full 0.0 domain [k] : !tidal.tensor<[4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  // expected-error@+1 {{domain lists dimension 't' twice}}
  %a = sdg.full 0.0 domain [t, t] : !tidal.tensor<[4], f32>
}

// -----
sdg.graph @p dims [t < T, i < I] {
  // expected-error@+1 {{result shape 'i + 1' uses 'i', which is neither a step of the op's domain nor a bound}}
  %a = sdg.full 0.0 domain [t] : !tidal.tensor<[i + 1], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{expects 1 operands, got 2}}
  %b = "sdg.unary"(%a, %a) <{kind = 3 : i32, deps = [#tidal.index<[]>, #tidal.index<[]>], domain = #tidal.index<[]>}> : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{result element type must equal the operand's}}
  %b = sdg.unary exp %a[] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f16>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{result shape must equal the operand's}}
  %b = sdg.unary exp %a[] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[5], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>
  %b = sdg.full 0.0 domain [] : !tidal.tensor<[4], i32>
  // expected-error@+1 {{operand element types differ ('f32' vs 'i32'): insert a cast}}
  %c = sdg.binary add %a[], %b[] domain [] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], i32>) -> !tidal.tensor<[4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{result element type must be 'i1'}}
  %c = sdg.binary lt %a[], %a[] domain [] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>
  %b = sdg.full 0.0 domain [] : !tidal.tensor<[3], f32>
  // expected-error@+1 {{operand dimension '3' cannot broadcast to result dimension '4'}}
  %c = sdg.binary add %a[], %b[] domain [] : (!tidal.tensor<[4], f32>, !tidal.tensor<[3], f32>) -> !tidal.tensor<[4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{result rank 2 does not match broadcast rank 1}}
  %c = sdg.binary add %a[], %a[] domain [] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[1, 4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{condition must have element type i1}}
  %c = sdg.where %a[], %a[], %a[] domain [] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %c = sdg.full 0.0 domain [] : !tidal.tensor<[4], i1>
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>
  %b = sdg.full 0.0 domain [] : !tidal.tensor<[4], i32>
  // expected-error@+1 {{branches and result must share one element type}}
  %r = sdg.where %c[], %a[], %b[] domain [] : (!tidal.tensor<[4], i1>, !tidal.tensor<[4], f32>, !tidal.tensor<[4], i32>) -> !tidal.tensor<[4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{dimension 1 is out of range for rank 1}}
  %r = sdg.reduce sum [1] %a[] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4, 4], f32>
  // expected-error@+1 {{reduces dimension 0 twice}}
  %r = sdg.reduce sum [0, 0] %a[] domain [] : (!tidal.tensor<[4, 4], f32>) -> !tidal.tensor<[], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4, 4], f32>
  // expected-error@+1 {{result rank must be 2}}
  %r = sdg.reduce sum [0] keepdim %a[] domain [] : (!tidal.tensor<[4, 4], f32>) -> !tidal.tensor<[4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{dimension 1 is out of range for rank 1}}
  %r = sdg.scan cumsum 1 %a[] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{result shape must equal the operand's}}
  %r = sdg.flip 0 %a[] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[2], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[], f32>
  // expected-error@+1 {{operands must have rank >= 1}}
  %r = sdg.matmul %a[], %a[] domain [] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[2, 3], f32>
  // expected-error@+1 {{contracted dimensions differ: '3' vs '2'}}
  %r = sdg.matmul %a[], %a[] domain [] : (!tidal.tensor<[2, 3], f32>, !tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[2, 3], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[3, 3], f32>
  // expected-error@+1 {{operands and result must share one element type}}
  %r = sdg.matmul %a[], %a[] domain [] : (!tidal.tensor<[3, 3], f32>, !tidal.tensor<[3, 3], f32>) -> !tidal.tensor<[3, 3], f16>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[2, 3], f32>
  // expected-error@+1 {{cannot reshape 6 elements into 4}}
  %r = sdg.reshape %a[] domain [] : (!tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[2, 3], f32>
  // expected-error@+1 {{perm must be a permutation of the operand's 2 dimensions}}
  %r = sdg.permute [0, 0] %a[] domain [] : (!tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[2, 3], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[2, 3], f32>
  // expected-error@+1 {{result dimension 0 must be operand dimension 1}}
  %r = sdg.permute [1, 0] %a[] domain [] : (!tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[2, 3], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{operand dimension '2' cannot broadcast to result dimension '3'}}
  %r = sdg.expand %a[] domain [] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[4, 3], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[2, 2], f32>
  // expected-error@+1 {{cannot expand rank 2 to the lower rank 1}}
  %r = sdg.expand %a[] domain [] : (!tidal.tensor<[2, 2], f32>) -> !tidal.tensor<[2], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[2, 3], f32>
  // expected-error@+1 {{can only squeeze a dimension of size 1}}
  %r = sdg.squeeze 0 %a[] domain [] : (!tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[3], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[1, 3], f32>
  // expected-error@+1 {{result rank must be one less than the operand's}}
  %r = sdg.squeeze 0 %a[] domain [] : (!tidal.tensor<[1, 3], f32>) -> !tidal.tensor<[1, 3], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[3], f32>
  // expected-error@+1 {{dimension 2 is out of range for rank 1}}
  %r = sdg.unsqueeze 2 %a[] domain [] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3, 1], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[3], f32>
  // expected-error@+1 {{result rank must be one more than the operand's}}
  %r = sdg.unsqueeze 0 %a[] domain [] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[T], f32>
  // expected-error@+1 {{start 't' uses 't', which is neither a step of the op's domain nor a bound}}
  %r = sdg.slice 0 at <t> %a[] domain [] : (!tidal.tensor<[T], f32>) -> !tidal.tensor<[1], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[T, 4], f32>
  // expected-error@+1 {{result rank must be one less than the operand's}}
  %r = sdg.take 0 at <t> %a[] domain [t] : (!tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[1, 4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[T, 4], f32>
  // expected-error@+1 {{index 't + 1' uses 't', which is neither a step of the op's domain nor a bound}}
  %r = sdg.take 0 at <t + 1> %a[] domain [] : (!tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[5, 4], f32>
  %i = sdg.full 0.0 domain [] : !tidal.tensor<[2, 2], i64>
  // expected-error@+1 {{index operand must have rank 0 or 1}}
  %r = sdg.index_select 0 %a[], %i[] domain [] : (!tidal.tensor<[5, 4], f32>, !tidal.tensor<[2, 2], i64>) -> !tidal.tensor<[2, 2, 4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[5, 4], f32>
  %i = sdg.full 0.0 domain [] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{index operand must have an integer element type}}
  %r = sdg.index_select 0 %a[], %i[] domain [] : (!tidal.tensor<[5, 4], f32>, !tidal.tensor<[2], f32>) -> !tidal.tensor<[2, 4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[5, 4], f32>
  %i = sdg.full 0.0 domain [] : !tidal.tensor<[2], i64>
  // expected-error@+1 {{result rank must be 2}}
  %r = sdg.index_select 0 %a[], %i[] domain [] : (!tidal.tensor<[5, 4], f32>, !tidal.tensor<[2], i64>) -> !tidal.tensor<[4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[5, 4], f32>
  %i = sdg.full 0.0 domain [] : !tidal.tensor<[2], i64>
  // expected-error@+1 {{source and index must have the same rank}}
  %r = sdg.gather 0 %a[], %i[] domain [] : (!tidal.tensor<[5, 4], f32>, !tidal.tensor<[2], i64>) -> !tidal.tensor<[2], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[5, 4], f32>
  %i = sdg.full 0.0 domain [] : !tidal.tensor<[5, 1], i64>
  // expected-error@+1 {{result shape must equal the index shape}}
  %r = sdg.gather 1 %a[], %i[] domain [] : (!tidal.tensor<[5, 4], f32>, !tidal.tensor<[5, 1], i64>) -> !tidal.tensor<[5, 4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[5, 4], f32>
  %i = sdg.full 0.0 domain [] : !tidal.tensor<[5, 1], i64>
  %s = sdg.full 0.0 domain [] : !tidal.tensor<[5, 2], f32>
  // expected-error@+1 {{index and source must have the same shape}}
  %r = sdg.scatter_add 1 %a[], %i[], %s[] domain [] : (!tidal.tensor<[5, 4], f32>, !tidal.tensor<[5, 1], i64>, !tidal.tensor<[5, 2], f32>) -> !tidal.tensor<[5, 4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[5, 4], f32>
  %i = sdg.full 0.0 domain [] : !tidal.tensor<[5, 1], i64>
  %s = sdg.full 0.0 domain [] : !tidal.tensor<[5, 1], f32>
  // expected-error@+1 {{result type must equal the destination type}}
  %r = sdg.scatter_add 1 %a[], %i[], %s[] domain [] : (!tidal.tensor<[5, 4], f32>, !tidal.tensor<[5, 1], i64>, !tidal.tensor<[5, 1], f32>) -> !tidal.tensor<[5, 1], f32>
}

// -----
sdg.graph @p dims [t < T] {
  // expected-error@+1 {{needs at least one operand}}
  %r = "sdg.concat"() <{dim = 0 : i64, deps = [], domain = #tidal.index<[]>}> : () -> !tidal.tensor<[4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[2, 4], f32>
  %b = sdg.full 0.0 domain [] : !tidal.tensor<[2, 3], f32>
  // expected-error@+1 {{operands differ in dimension 1, which is not concatenated}}
  %r = sdg.concat 0 %a[], %b[] domain [] : (!tidal.tensor<[2, 4], f32>, !tidal.tensor<[2, 3], f32>) -> !tidal.tensor<[4, 4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[2, 4], f32>
  %b = sdg.full 0.0 domain [] : !tidal.tensor<[2, 4], i32>
  // expected-error@+1 {{operands must share rank and element type}}
  %r = sdg.concat 0 %a[], %b[] domain [] : (!tidal.tensor<[2, 4], f32>, !tidal.tensor<[2, 4], i32>) -> !tidal.tensor<[4, 4], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{after 't' uses 't', which is neither a step of the op's domain nor a bound}}
  %r = sdg.pad 0 <0> <t> value 0.0 %a[] domain [] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[3], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{dimension 1 is out of range for rank 1}}
  %r = sdg.pad 1 <0> <1> value 0.0 %a[] domain [] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[3], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[2], f32>
  // expected-error@+1 {{result shape must equal the operand's}}
  %r = sdg.cast %a[] domain [] : (!tidal.tensor<[2], f32>) -> !tidal.tensor<[3], i32>
}

// -----
sdg.graph @p dims [t < T] {
  // expected-error@+1 {{callee name must not be empty}}
  %r = sdg.udf ""() domain [] : () -> !tidal.tensor<[2], f32>
}

// -----
sdg.graph @p dims [t < T] {
  // expected-error@+1 {{value element type 'f32' differs from the result's 'i32'}}
  %r = sdg.constant dense<1.0> : tensor<2xf32> domain [] : !tidal.tensor<[2], i32>
}

// -----
sdg.graph @p dims [t < T] {
  // expected-error@+1 {{value shape must equal the result's static shape}}
  %r = sdg.constant dense<1.0> : tensor<2xf32> domain [] : !tidal.tensor<[T], f32>
}

// -----
sdg.graph @p dims [t < T] {
  // expected-error@+1 {{dimension 1 is out of range for rank 1}}
  %r = sdg.iota 1 domain [t] : !tidal.tensor<[t + 1], i64>
}

// -----
sdg.graph @p dims [t < T] {
  // expected-error@+1 {{result must be a scalar tensor}}
  %r = sdg.symbol_value <t> domain [t] : !tidal.tensor<[1], i64>
}

// -----
sdg.graph @p dims [t < T] {
  // expected-error@+1 {{expression 't' uses 't', which is neither a step of the op's domain nor a bound}}
  %r = sdg.symbol_value <t> domain [] : !tidal.tensor<[], i64>
}

// -----
sdg.graph @p dims [t < T] {
  // expected-error@+1 {{element type must be an integer, index or float type, got 'tensor<2xf32>'}}
  %r = sdg.full 0.0 domain [] : !tidal.tensor<[4], tensor<2xf32>>
}

// -----
sdg.graph @p dims [t < T] {
  // expected-error@+1 {{shape dimension 't:T' must be an expression, not a slice}}
  %r = sdg.full 0.0 domain [t] : !tidal.tensor<[t:T], f32>
}

// -----
sdg.graph @p dims [t < T] {
  // expected-error@+1 {{'floordiv' is not a valid symbol name}}
  %r = sdg.full 0.0 domain [t] : !tidal.tensor<[floordiv], f32>
}

// -----
sdg.graph @p dims [t < T] {
  // expected-error@+1 {{select takes exactly 3 arguments (condition, then, else)}}
  %r = sdg.full 0.0 domain [t] : !tidal.tensor<[select(t, 1)], f32>
}

// -----
sdg.graph @p dims [t < T] {
  // expected-error@+1 {{min takes at least 2 arguments}}
  %r = sdg.full 0.0 domain [t] : !tidal.tensor<[min(t)], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{has 1 operands but 2 dependence expressions}}
  %b = "sdg.unary"(%a) <{kind = 3 : i32, deps = [#tidal.index<[]>, #tidal.index<[]>], domain = #tidal.index<[]>}> : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
}
// -----
sdg.graph @p dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  // A slice dependence prepends a dimension: reducing dimension 1 of x[0:t + 1] is in range.
  %ok = sdg.reduce sum [1] %x[0:t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[t + 1], f32>
  // expected-error@+1 {{dimension 2 is out of range for rank 2}}
  %bad = sdg.reduce sum [2] %x[0:t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[t + 1], f32>
}
// -----
sdg.graph @p dims [t < T] {
  // expected-error@+1 {{needs at least one branch}}
  %m = "sdg.merge"() <{deps = [], conds = [], domain = #tidal.index<[t]>}> : () -> !tidal.tensor<[4], f32>
}
// -----
sdg.graph @p dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{needs one condition per branch}}
  %m = "sdg.merge"(%x) <{deps = [#tidal.index<[t]>], conds = [], domain = #tidal.index<[t]>}> : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
}
// -----
sdg.graph @p dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %y = sdg.input "y" domain [t] : !tidal.tensor<[3], f32>
  // expected-error@+1 {{branch 1 has type '!tidal.tensor<[3], f32>', which differs from the result type '!tidal.tensor<[4], f32>'}}
  %m = sdg.merge %x[0] if <t eq 0>, %y[t] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[3], f32>) -> !tidal.tensor<[4], f32>
}
// -----
sdg.graph @p dims [t < T, i < I] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{condition 'i eq 0' uses 'i', which is neither a step of the op's domain nor a bound}}
  %m = sdg.merge %x[0] if <i eq 0>, %m[t - 1] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
}
// -----
sdg.graph @p dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{domain component 'k' is not a temporal dimension of the enclosing program (declared: t)}}
  sdg.output "x" %x[t] domain [k] : !tidal.tensor<[4], f32>
}
// -----
// expected-error@+1 {{dimension name 'T' is used twice}}
sdg.graph @p dims [t < T, T < I] {
}

// -----
sdg.graph @p dims [t < T] {
  // expected-error@+1 {{shape dimension must be non-negative, got -2}}
  %r = sdg.full 0.0 domain [] : !tidal.tensor<[-2], f32>
}

// -----
sdg.graph @p dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{body argument 0 has type '!tidal.tensor<[4], f32>', but operand 0 ('!tidal.tensor<[4], f32>') read through 1 slice(s) gives 1 leading axes, then its shape}}
  %i = sdg.island %x[0:t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32> {
  ^bb0(%a: !tidal.tensor<[4], f32>):
    sdg.yield %a : !tidal.tensor<[4], f32>
  }
}

// -----
sdg.graph @p dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{operand 0 reads a strided slice (0:t + 1:2): an island reads points or unit-step slices}}
  %i = sdg.island %x[0:t + 1:2] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32> {
  ^bb0(%a: !tidal.tensor<[t floordiv 2 + 1, 4], f32>):
    %s = sdg.reduce sum [0] %a[t] domain [t] : (!tidal.tensor<[t floordiv 2 + 1, 4], f32>) -> !tidal.tensor<[4], f32>
    sdg.yield %s : !tidal.tensor<[4], f32>
  }
}

// -----
sdg.graph @p dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{body has 0 arguments but the island has 1 operands}}
  %i = sdg.island %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32> {
    %f = sdg.full 0.0 domain [t] : !tidal.tensor<[4], f32>
    sdg.yield %f : !tidal.tensor<[4], f32>
  }
}

// -----
sdg.graph @p dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{body argument 0 has type '!tidal.tensor<[3], f32>', which differs from operand 0's '!tidal.tensor<[4], f32>'}}
  %i = sdg.island %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[3], f32> {
  ^bb0(%a: !tidal.tensor<[3], f32>):
    sdg.yield %a : !tidal.tensor<[3], f32>
  }
}

// -----
sdg.graph @p dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %i = sdg.island %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32> {
  ^bb0(%a: !tidal.tensor<[4], f32>):
    // expected-error@+1 {{is in an island over domain [t] and must have that domain}}
    %f = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>
    sdg.yield %f : !tidal.tensor<[4], f32>
  }
}

// -----
sdg.graph @p dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %i = sdg.island %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32> {
  ^bb0(%a: !tidal.tensor<[4], f32>):
    // expected-error@+1 {{operand 0 is read at [t - 1] inside an island: body ops read at the identity}}
    %n = sdg.unary neg %a[t - 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
    sdg.yield %n : !tidal.tensor<[4], f32>
  }
}

// -----
sdg.graph @p dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  // expected-error@+1 {{yields 1 values whose types differ from the island's results}}
  %i = sdg.island %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[], f32> {
  ^bb0(%a: !tidal.tensor<[4], f32>):
    sdg.yield %a : !tidal.tensor<[4], f32>
  }
}

// -----
sdg.graph @p dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  // expected-note@+1 {{required by region isolation constraints}}
  %i = sdg.island %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32> {
  ^bb0(%a: !tidal.tensor<[4], f32>):
    // expected-error@+1 {{using value defined outside the region}}
    %n = sdg.unary neg %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
    sdg.yield %n : !tidal.tensor<[4], f32>
  }
}

// -----

sdg.graph @g dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4], f32>
  %b = sdg.full 0.0 domain [] : !tidal.tensor<[3], f32>
  // expected-error@+1 {{coefficient shape must equal the operand's}}
  %r = sdg.linear_scan 0 %a[], %b[] domain [] : (!tidal.tensor<[4], f32>, !tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
}

// -----

sdg.graph @g dims [t < T] {
  %a = sdg.full 0.0 domain [] : !tidal.tensor<[4], i32>
  // expected-error@+1 {{operands must have a floating-point element type}}
  %r = sdg.linear_scan 0 %a[], %a[] domain [] : (!tidal.tensor<[4], i32>, !tidal.tensor<[4], i32>) -> !tidal.tensor<[4], i32>
}
