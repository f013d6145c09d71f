"""`LlamaConfig`: the keys of a Hugging Face Llama `config.json` that Tidal honours."""
from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any

from .errors import model_error

__all__ = ["LlamaConfig"]


@dataclass(frozen=True)
class LlamaConfig:
    """A Llama architecture (Hugging Face's names). `rope_scaling` is kept as
    JSON text so the config stays hashable (`scaling()` parses it)."""

    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    vocab_size: int
    rms_norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    rope_scaling_json: str = "null"
    max_position_embeddings: int = 2048
    tie_word_embeddings: bool = False

    @classmethod
    def from_dict(cls, config: dict, where: str = "config.json") -> "LlamaConfig":
        """From a parsed config.json; unknown keys are ignored, missing required ones are errors."""
        kind = config.get("model_type", "llama")
        if kind not in ("llama", "mistral"):
            raise model_error(f"{where}: model_type {kind!r} is not a Llama", "load a Llama checkpoint")
        required = ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "vocab_size")
        missing = [k for k in required if k not in config]
        if missing:
            raise model_error(f"{where} lacks {', '.join(missing)}", "a Hugging Face LlamaConfig has them")
        heads = _int(config, "num_attention_heads", where)
        hidden = _int(config, "hidden_size", where)
        kv = _int(config, "num_key_value_heads", where) if config.get("num_key_value_heads") else heads
        head_dim = _int(config, "head_dim", where) if config.get("head_dim") else hidden // heads
        if heads % kv:
            raise model_error(f"{where}: num_attention_heads {heads} is not a multiple of num_key_value_heads {kv}",
                             "check the config")
        if config.get("attention_bias") or config.get("mlp_bias"):
            raise model_error(f"{where}: attention_bias / mlp_bias are not supported", "load a Llama without biases")
        scaling = config.get("rope_scaling")
        return cls(hidden_size=hidden, intermediate_size=_int(config, "intermediate_size", where),
                   num_hidden_layers=_int(config, "num_hidden_layers", where), num_attention_heads=heads,
                   num_key_value_heads=kv, head_dim=head_dim, vocab_size=_int(config, "vocab_size", where),
                   rms_norm_eps=float(config.get("rms_norm_eps", 1e-5)),
                   rope_theta=float(config.get("rope_theta", 10000.0)),
                   rope_scaling_json=json.dumps(scaling, sort_keys=True),
                   max_position_embeddings=int(config.get("max_position_embeddings", 2048)),
                   tie_word_embeddings=bool(config.get("tie_word_embeddings", False)))

    def scaling(self) -> Any:
        return json.loads(self.rope_scaling_json)

    def as_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "rope_scaling_json"}
        out["rope_scaling"] = self.scaling()
        return out

    def weight_shapes(self) -> dict[str, tuple]:
        """Hugging Face tensor names -> shapes (nn.Linear's (out, in) layout)."""
        D, F, V = self.hidden_size, self.intermediate_size, self.vocab_size
        q, kv = self.num_attention_heads * self.head_dim, self.num_key_value_heads * self.head_dim
        shapes = {"model.embed_tokens.weight": (V, D)}
        for i in range(self.num_hidden_layers):
            pre = f"model.layers.{i}."
            shapes.update({pre + "self_attn.q_proj.weight": (q, D), pre + "self_attn.k_proj.weight": (kv, D),
                           pre + "self_attn.v_proj.weight": (kv, D), pre + "self_attn.o_proj.weight": (D, q),
                           pre + "mlp.gate_proj.weight": (F, D), pre + "mlp.up_proj.weight": (F, D),
                           pre + "mlp.down_proj.weight": (D, F), pre + "input_layernorm.weight": (D,),
                           pre + "post_attention_layernorm.weight": (D,)})
        shapes["model.norm.weight"] = (D,)
        if not self.tie_word_embeddings:
            shapes["lm_head.weight"] = (V, D)
        return shapes


def _int(config: dict, key: str, where: str) -> int:
    value = config[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise model_error(f"{where}: {key} = {value!r} is not a positive int", "check the config")
    return value
