"""`tidal.models`: ready-made models built on `td.nn`, loading Hugging Face checkpoints.

    from tidal.models import Llama
    model = Llama.from_pretrained("path/to/Llama-3.2-1B")
    ids = model.generate(prompt_ids, max_new_tokens=32)
"""
from .llama import Llama, LlamaConfig

__all__ = ["Llama", "LlamaConfig"]
