"""The `tidal` dialect's Python module (types and attributes only: no ops).

MLIR's Python bindings import `<prefix>.<namespace>` the first time they
meet a type or attribute of a dialect namespace, to find its Python classes,
and retry on every access while the import fails (~50-90 us each). This
module exists so that the import of the `tidal` namespace (`!tidal.tensor`,
`#tidal.index`) succeeds once and is cached.
"""
