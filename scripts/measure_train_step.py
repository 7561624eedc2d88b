"""Measure real training steps on one GPU, for scripts/compare_measured_steps.py.

Run on a machine with a GPU, PyTorch, transformers and peft (none of them gpuplan
dependencies)::

    OUT=results python scripts/measure_train_step.py            # run 1: the GPU cases
    OUT=results python scripts/measure_train_step.py --compiled # run 1: torch.compile cases
    OUT=results python scripts/measure_train_step.py --extra    # run 2
    OUT=results python scripts/measure_train_step.py --recheck  # run 3
    OUT=/tmp/smoke python scripts/measure_train_step.py --smoke  # tiny shapes, on the CPU

Llama-style decoders (``transformers.LlamaForCausalLM`` from a config, random weights, no
download), PyTorch SDPA attention, no ``torch.compile``: an ordinary eager PyTorch stack.
Pretraining runs the 16 B/parameter mixed-precision setup the planner assumes (fp32 master
weights, bf16 autocast, fused AdamW); LoRA freezes a bf16 base and trains rank-16 adapters
on every linear layer (peft). Each case writes one JSON line to ``$OUT/steps.jsonl`` as soon
as it is measured (median step time of the timed steps after warm-up, peak allocated
memory, counted from after the model and optimizer are built: a LoRA base is built in fp32
and cast to bf16, and before run 3 that build was counted); a case that runs out of memory
is recorded as such and the next one runs. ``bf16_weights`` cases keep weights, gradients
and AdamW states in bf16 (no fp32 master copy).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

VOCAB = 32000


@dataclass(frozen=True)
class Case:
    name: str
    method: str  # pretrain | lora
    layers: int
    hidden: int
    heads: int
    intermediate: int
    seq_len: int
    micro_batch: int
    checkpointing: bool = False
    bf16_weights: bool = False
    """Pretraining with bf16 weights, gradients and AdamW states (no fp32 master copy)."""
    compiled: bool = False
    """``torch.compile`` on the model (the compile itself is in the warm-up steps)."""


CASES = (
    Case("1.3B", "pretrain", 24, 2048, 16, 5632, 4096, 4),
    Case("350M", "pretrain", 24, 1024, 16, 2816, 4096, 8),
    Case("125M", "pretrain", 12, 768, 12, 2048, 2048, 16),
    Case("2.7B", "pretrain", 32, 2560, 32, 6912, 4096, 2),
    Case("6.7B LoRA", "lora", 32, 4096, 32, 11008, 4096, 1),
    Case("6.7B LoRA ckpt b4", "lora", 32, 4096, 32, 11008, 4096, 4, checkpointing=True),
    Case("1.3B ckpt", "pretrain", 24, 2048, 16, 5632, 4096, 4, checkpointing=True),
    Case("6.7B ckpt", "pretrain", 32, 4096, 32, 11008, 4096, 1, checkpointing=True),
)
COMPILED = (
    Case("125M compiled", "pretrain", 12, 768, 12, 2048, 2048, 16, compiled=True),
    Case("1.3B compiled", "pretrain", 24, 2048, 16, 5632, 4096, 4, compiled=True),
    Case("2.7B compiled", "pretrain", 32, 2560, 32, 6912, 4096, 2, compiled=True),
)
EXTRA = (
    # A second machine: the calibration anchor again, then the cases run 1 did not cover.
    Case("1.3B bf16 AdamW", "pretrain", 24, 2048, 16, 5632, 4096, 4, bf16_weights=True),
    Case("1.3B run 2", "pretrain", 24, 2048, 16, 5632, 4096, 4),
    Case("6.7B bf16 AdamW ckpt", "pretrain", 32, 4096, 32, 11008, 4096, 1, True, True),
    Case("6.7B LoRA 2048x4", "lora", 32, 4096, 32, 11008, 2048, 4),
    Case("6.7B LoRA 2048x4 ckpt", "lora", 32, 4096, 32, 11008, 2048, 4, checkpointing=True),
    Case("350M bf16 AdamW", "pretrain", 24, 1024, 16, 2816, 4096, 8, bf16_weights=True),
    Case("2.7B ckpt", "pretrain", 32, 2560, 32, 6912, 4096, 2, checkpointing=True),
)
RECHECK = (
    # Run 3: the LoRA cases with recomputation again, their peak counted after the build.
    Case("6.7B LoRA ckpt b4", "lora", 32, 4096, 32, 11008, 4096, 4, checkpointing=True),
    Case("6.7B LoRA 2048x4 ckpt", "lora", 32, 4096, 32, 11008, 2048, 4, checkpointing=True),
    Case("6.7B LoRA", "lora", 32, 4096, 32, 11008, 4096, 1),
)
SMOKE = (
    Case("smoke", "pretrain", 2, 64, 4, 172, 128, 2),
    Case("smoke ckpt", "pretrain", 2, 64, 4, 172, 128, 2, checkpointing=True),
    Case("smoke LoRA", "lora", 2, 64, 4, 172, 128, 2),
    Case("smoke LoRA ckpt", "lora", 2, 64, 4, 172, 128, 2, checkpointing=True),
    Case("smoke bf16", "pretrain", 2, 64, 4, 172, 128, 2, checkpointing=True, bf16_weights=True),
)
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny shapes on the CPU")
    parser.add_argument("--compiled", action="store_true", help="the torch.compile cases")
    parser.add_argument("--extra", action="store_true", help="the second run's cases")
    parser.add_argument("--recheck", action="store_true", help="the third run's cases")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    import torch

    out = Path(os.environ.get("OUT", ".")) / "steps.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    device = "cpu" if args.smoke or not torch.cuda.is_available() else "cuda"
    with out.open("a", encoding="utf-8") as sink:

        def write(record: dict[str, Any]) -> None:
            sink.write(json.dumps(record) + "\n")
            sink.flush()
            print(json.dumps(record), flush=True)

        cases_set = next(
            (n for n in ("smoke", "compiled", "extra", "recheck") if getattr(args, n)), "main"
        )
        write({**_environment(torch, device), "cases": cases_set})
        if device == "cuda":
            write(_matmul(torch))
        cases = {
            "smoke": SMOKE,
            "compiled": COMPILED,
            "extra": EXTRA,
            "recheck": RECHECK,
            "main": CASES,
        }[cases_set]
        for case in cases:
            write(_measure(torch, case, device, args.warmup, args.steps))
    return 0


def _environment(torch: Any, device: str) -> dict[str, Any]:
    import transformers

    name = torch.cuda.get_device_name(0) if device == "cuda" else "cpu"
    return {
        "kind": "environment",
        "device": name,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def _matmul(torch: Any) -> dict[str, Any]:
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(10):
        a @ b
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / 10
    return {"kind": "matmul", "n": n, "tflops": 2 * n**3 / seconds / 1e12}


def _model(torch: Any, case: Case, device: str) -> tuple[Any, list[Any]]:
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=case.hidden,
        intermediate_size=case.intermediate,
        num_hidden_layers=case.layers,
        num_attention_heads=case.heads,
        num_key_value_heads=case.heads,
        max_position_embeddings=case.seq_len,
        tie_word_embeddings=False,
    )
    config._attn_implementation = "sdpa"
    with torch.device(device):
        model: Any = LlamaForCausalLM(config)
    if case.bf16_weights:
        model = model.to(torch.bfloat16)
    if case.method == "lora":
        from peft import LoraConfig, get_peft_model

        model = model.to(torch.bfloat16)
        if case.checkpointing:
            model.enable_input_require_grads()
        lora = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, target_modules=LORA_TARGETS)
        model = get_peft_model(model, lora)
    if case.checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.config.use_cache = False
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    if case.compiled:
        model = torch.compile(model)
    return model, trainable


def _measure(torch: Any, case: Case, device: str, warmup: int, steps: int) -> dict[str, Any]:
    record: dict[str, Any] = {"kind": "case", **asdict(case), "vocab": VOCAB}
    model = optimizer = None
    try:
        if device == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        built = time.perf_counter()
        model, trainable = _model(torch, case, device)
        record["params_total"] = sum(p.numel() for p in model.parameters())
        record["params_trainable"] = sum(p.numel() for p in trainable)
        optimizer = torch.optim.AdamW(trainable, lr=1e-4, fused=device == "cuda")
        record["build_s"] = round(time.perf_counter() - built, 2)
        if device == "cuda":
            # A LoRA base is built in fp32 and then cast to bf16: that build peak is no
            # training memory, so the step peak is counted from here.
            record["build_peak_gib"] = torch.cuda.max_memory_allocated() / 2**30
            torch.cuda.reset_peak_memory_stats()
        shape = (case.micro_batch, case.seq_len)
        ids = torch.randint(0, VOCAB, shape, device=device)
        times = []
        for step in range(warmup + steps):
            if device == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            with torch.autocast(device_type=device, dtype=torch.bfloat16):
                loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if device == "cuda":
                torch.cuda.synchronize()
            if step >= warmup:
                times.append(time.perf_counter() - start)
        step_s = statistics.median(times)
        record.update(
            status="ok",
            step_s=step_s,
            step_s_all=[round(t, 5) for t in times],
            tokens_per_s=case.micro_batch * case.seq_len / step_s,
            loss=float(loss.detach().float().cpu()),
        )
        if device == "cuda":
            record["max_allocated_gib"] = torch.cuda.max_memory_allocated() / 2**30
            record["max_reserved_gib"] = torch.cuda.max_memory_reserved() / 2**30
    except Exception as error:  # an out-of-memory case is a result, not the end of the run
        oom = "out of memory" in str(error).lower()
        text = f"{type(error).__name__}: {error}"[:400]
        record.update(status="oom" if oom else "error", error=text)
        if device == "cuda":
            record["max_allocated_gib"] = torch.cuda.max_memory_allocated() / 2**30
    finally:
        del model, optimizer
        gc.collect()
        if device == "cuda":
            torch.cuda.empty_cache()
    return record


if __name__ == "__main__":
    sys.exit(main())
