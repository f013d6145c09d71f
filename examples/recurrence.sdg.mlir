// s[0] = x[0]; s[t] = 0.5 * s[t-1] + x[t]; w[t] = sum(x[max(0,t-2):t+1]); g[t] = sum(x[t:T])
sdg.graph @recurrence dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %half = sdg.constant dense<5.000000e-01> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %s = sdg.merge %x[0] if <t eq 0>, %n[t] if <true> domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %d = sdg.binary mul %s[t - 1], %half[] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[4], f32>
  %n = sdg.binary add %d[t], %x[t] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %w = sdg.reduce sum [0] %x[max(0, t - 2):t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  %g = sdg.reduce sum [0] %x[t:T] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "s" %s[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "w" %w[t] domain [t] : !tidal.tensor<[4], f32>
  sdg.output "g" %g[t] domain [t] : !tidal.tensor<[4], f32>
}
