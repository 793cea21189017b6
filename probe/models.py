"""Loading models: local path or Hub id, family from the config, device and dtype resolution.

The family comes from the model's config (``is_encoder_decoder``, ``architectures``, the auto-mapping of
its ``model_type``), never from its name: a local folder called ``my-model`` works as well as
``google/mt5-base``. Models are put in eval mode and every scorer runs under ``torch.inference_mode``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factatlas.errors import ConfigError, FactatlasError

FAMILIES = ("mlm", "causal", "seq2seq")
DEVICES = ("auto", "cpu", "cuda")
DTYPES = ("auto", "fp32", "bf16", "fp16")


@dataclass(frozen=True)
class LoadedModel:
    name: str  # what the user passed (path or Hub id)
    family: str  # "mlm" | "causal" | "seq2seq"
    model: Any  # a transformers PreTrainedModel in eval mode
    tokenizer: Any
    device: str
    dtype: str  # "fp32" | "bf16" | "fp16"

    @property
    def slug(self) -> str:
        return model_slug(self.name)


def model_slug(name: str) -> str:
    """A folder name for a model: Hub ids keep the owner (``org--model``), local paths their last part."""
    path = Path(name)
    base = path.resolve().name if path.exists() else name.strip("/").replace("/", "--")
    return re.sub(r"[^A-Za-z0-9._-]+", "-", base) or "model"


def detect_family(config: Any) -> str:
    """``mlm`` / ``causal`` / ``seq2seq`` from a transformers config; ConfigError when none fits."""
    if getattr(config, "is_encoder_decoder", False):
        return "seq2seq"
    for arch in getattr(config, "architectures", None) or ():
        if arch.endswith("ForMaskedLM"):
            return "mlm"
        if arch.endswith(("ForCausalLM", "LMHeadModel")) and "DoubleHeads" not in arch:
            return "causal"
        if arch.endswith("ForConditionalGeneration"):
            return "seq2seq"
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
        MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES,
    )

    model_type = getattr(config, "model_type", "")
    if model_type in MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES:
        return "seq2seq"
    if model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return "causal"
    if model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return "mlm"
    raise ConfigError(f"cannot tell the model family of model_type '{model_type}' "
                      f"(architectures={getattr(config, 'architectures', None)}); pass --family mlm|causal|seq2seq")


def resolve_device(device: str) -> str:
    import torch

    if device not in DEVICES:
        raise ConfigError(f"unknown device '{device}'. Available: {', '.join(DEVICES)}")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ConfigError("--device cuda but torch sees no CUDA device; use --device cpu or auto")
    return device


def resolve_dtype(dtype: str, device: str) -> str:
    """auto: bf16 on GPUs that support it, else fp16 on GPU; fp32 on CPU (half precision is slow there)."""
    import torch

    if dtype not in DTYPES:
        raise ConfigError(f"unknown dtype '{dtype}'. Available: {', '.join(DTYPES)}")
    if dtype != "auto":
        return dtype
    if device == "cuda":
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return "fp32"


def torch_dtype(name: str):
    import torch

    return {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[name]


def _auto_class(family: str):
    import transformers

    return {"mlm": transformers.AutoModelForMaskedLM, "causal": transformers.AutoModelForCausalLM,
            "seq2seq": transformers.AutoModelForSeq2SeqLM}[family]


def _looks_like_path(name: str) -> bool:
    """Hub ids are ``name`` or ``org/name``; anything starting like a path is meant as a local folder."""
    return name.startswith((".", "/", "~")) or name.count("/") > 1 or "\\" in name


def model_config(name: str) -> Any:
    """The model's transformers config (config.json only: no weights, no tokenizer), or an error naming the fix."""
    from transformers import AutoConfig

    if _looks_like_path(name) and not Path(name).expanduser().is_dir():
        raise ConfigError(f"--model {name}: no such folder; pass a folder written by save_pretrained "
                          "(config.json + weights) or a Hub id such as bert-base-multilingual-cased")
    try:
        return AutoConfig.from_pretrained(name)
    except (OSError, ValueError) as e:
        raise FactatlasError(f"cannot load model '{name}': {e}. Pass a local folder saved with "
                             "save_pretrained, or a Hub id whose files are cached or reachable.") from e


def model_family(name: str) -> str:
    """The family of model ``name`` from its config alone, before any weight loads."""
    return detect_family(model_config(name))


def load_model(name: str, *, family: str | None = None, device: str = "auto", dtype: str = "auto",
               device_map: str | None = None) -> LoadedModel:
    """Load tokenizer + model from a local folder or a Hub id (cached or downloadable).

    ``device_map`` (``"auto"``, ``"balanced"``, ...) spreads one model that is larger than a GPU over every
    visible GPU (and CPU memory) through accelerate; inputs then go to the device of the input embeddings
    and accelerate's hooks move activations between layers. Without it the whole model sits on ``device``.
    """
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # our own progress goes to stderr via factatlas.console
    if family is not None and family not in FAMILIES:
        raise ConfigError(f"unknown model family '{family}'. Available: {', '.join(FAMILIES)}")
    family = family or detect_family(model_config(name))
    device = resolve_device(device)
    dtype = resolve_dtype(dtype, device)
    tokenizer = AutoTokenizer.from_pretrained(name)
    if device_map:
        require_accelerate(device_map)
        model = _auto_class(family).from_pretrained(name, dtype=torch_dtype(dtype), device_map=device_map)
        device = input_device(model)
    else:
        model = _auto_class(family).from_pretrained(name, dtype=torch_dtype(dtype))
        model.to(device)
    model.eval()
    return LoadedModel(name, family, model, tokenizer, device, dtype)


def require_accelerate(device_map: str) -> None:
    """``device_map`` loading needs accelerate; say which extra brings it."""
    try:
        import accelerate  # noqa: F401
    except ModuleNotFoundError as e:
        raise ConfigError(f"--device-map {device_map}: needs the accelerate package; install it with "
                          "pip install 'factatlas[gpu]'") from e


def input_device(model: Any) -> str:
    """Where inputs go for a model spread by accelerate: the device of its input embeddings."""
    device = model.get_input_embeddings().weight.device
    return device.type if device.index is None else f"{device.type}:{device.index}"


def wrap_model(model: Any, tokenizer: Any, *, name: str = "in-memory", family: str | None = None) -> LoadedModel:
    """A LoadedModel around objects already in memory (tests, benchmarks)."""
    family = family or detect_family(model.config)
    model.eval()
    dtype = {"torch.float32": "fp32", "torch.bfloat16": "bf16", "torch.float16": "fp16"}.get(str(model.dtype), "fp32")
    return LoadedModel(name, family, model, tokenizer, str(model.device.type), dtype)
