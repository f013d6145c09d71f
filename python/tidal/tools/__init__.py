"""Command-line tools (tidal-opt)."""
