// Every designator form of --verify-diagnostics, on upstream and sdg IR. The
// second RUN line checks that upstream mlir-opt agrees with each expectation.
// RUN: tidal-opt %s --split-input-file --verify-diagnostics
// RUN: mlir-opt --load-dialect-plugin=%tidal_plugin %s --split-input-file --verify-diagnostics

func.func @next_line() {
  // expected-error@+1 {{custom op 'retur' is unknown}}
  retur
}

// -----

func.func @previous_line() {
  retur
  // expected-error@-1 {{custom op 'retur' is unknown}}
}

// -----

func.func @same_line() {
  retur // expected-error {{custom op 'retur' is unknown}}
}

// -----

func.func @above() {
  retur
  // expected-error@above {{custom op 'retur' is unknown}}
}

// -----

func.func @below() {
  // expected-error@below {{custom op 'retur' is unknown}}
  retur
}

// -----

func.func @two_lines_down() {
  // expected-error@+2 {{custom op 'retur' is unknown}}

  retur
}

// -----

// A verifier error with a note on another line; its "see current operation"
// note is not reported (mlir-opt turns those off under verification).
// expected-note@below {{see existing symbol definition here}}
func.func @dup() {
  return
}
// expected-error@+1 {{redefinition of symbol named 'dup'}}
func.func @dup() {
  return
}

// -----

func.func @regex() {
  // expected-error-re@+1 {{custom op '{{[a-z]+}}' is {{(un)?known}}}}
  retur
}

// -----

// The sdg dialect's verifiers, checked the same way.
sdg.graph @g dims [t < T] {
  // expected-error@+1 {{domain lists dimension 't' twice}}
  %a = sdg.full 0.0 domain [t, t] : !tidal.tensor<[4], f32>
}

// -----

// A chunk without diagnostics and without expectations is fine too.
sdg.graph @ok dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  sdg.output "x" %x[t] domain [t] : !tidal.tensor<[4], f32>
}
