"""SDG and rt programs shared by several test files (as text)."""

V = "!tidal.tensor<[4], f32>"
S = "!tidal.tensor<[], f32>"

# rt: s[0] = x[0]; s[t + 1] = tanh(s[t])
RT_RECURRENCE = f"""
rt.program @rec dims [t < T] {{
  %x = rt.input "x" domain [t] : {V}
  %s = rt.recurrent domain [t] : {V}
  %x0 = rt.index %x[0] domain [] : ({V}) -> {V}
  rt.define %s[0] = %x0 : {V}, {V}
  %n = rt.unary tanh %s domain [t] : ({V}) -> {V}
  rt.define %s[t + 1] = %n : {V}, {V}
  rt.output "s" %s : {V}
}}
"""

# A recurrence whose dependence points to the future from a forward base case.
UNSCHEDULABLE_FUTURE = f"""
sdg.graph @future dims [t < T] {{
  %a = sdg.input "a" domain [] : {V}
  %s = sdg.merge %a[] if <t eq 0>, %f[t] if <true> domain [t] : ({V}, {V}) -> {V}
  %f = sdg.unary tanh %s[t + 1] domain [t] : ({V}) -> {V}
  sdg.output "s" %s[t] domain [t] : {V}
}}"""


def reinforce(stop: str, with_returns_output: bool = True) -> str:
    """REINFORCE-like (paper §7.4): acting through env UDFs, a per-iteration
    update, and returns over r[i, t:stop] (`t:T` or `t:min(t + 3, T)`)."""
    returns = f'  sdg.output "g" %g[i, t] domain [i, t] : {S}\n' if with_returns_output else ""
    return f"""
sdg.graph @reinforce dims [i < I, t < T] {{
  %w0 = sdg.param "W" dense<0.5> : tensor<4xf32> domain [] : {V}
  %w = sdg.merge %w0[] if <i eq 0>, %u[i - 1] if <true> domain [i] : ({V}, {V}) -> {V}
  %o0 = sdg.udf "env.reset"(%w[i]) domain [i] : ({V}) -> {V}
  %o = sdg.merge %o0[i] if <t eq 0>, %on[i, t - 1] if <true> domain [i, t] : ({V}, {V}) -> {V}
  %a = sdg.binary mul %w[i], %o[i, t] domain [i, t] : ({V}, {V}) -> {V}
  %on, %r = sdg.udf "env.step"(%a[i, t]) domain [i, t] : ({V}) -> ({V}, {S})
  %g = sdg.reduce sum [0] %r[i, {stop}] domain [i, t] : ({S}) -> {S}
  %l = sdg.binary mul %a[i, t], %g[i, t] domain [i, t] : ({V}, {S}) -> {V}
  %gs = sdg.reduce sum [0] %l[i, 0:T] domain [i] : ({V}) -> {V}
  %u = sdg.binary sub %w[i], %gs[i] domain [i] : ({V}, {V}) -> {V}
  sdg.output "w" %w[i] domain [i] : {V}
{returns}}}"""


# s[0] = a; s[t] = s[t - 1] + x[t - 6]: s[1..] can never be computed (x[-5] at
# the bottom of every chain), and the worklist discovers that one point per
# round; the output only needs s[0].
FAR_BASE = f"""
sdg.graph @far dims [t < T] {{
  %a = sdg.input "a" domain [] : {V}
  %x = sdg.input "x" domain [t] : {V}
  %s = sdg.merge %a[] if <t eq 0>, %f[t - 1] if <true> domain [t] : ({V}, {V}) -> {V}
  %f = sdg.binary add %s[t], %x[t - 5] domain [t] : ({V}, {V}) -> {V}
  sdg.output "s" %s[0] domain [] : {V}
}}"""
