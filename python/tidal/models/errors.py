"""Errors about a model's inputs (checkpoint files, call arguments), at the caller's line."""
from __future__ import annotations

from tidal.frontend.errors import TidalError, caller_location

__all__ = ["model_error"]


def model_error(reason: str, hint: str) -> TidalError:
    """A TidalError located at the first frame outside tidal (tidal.models included)."""
    return TidalError(reason, hint, location=caller_location())
