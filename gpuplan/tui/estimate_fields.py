"""The Estimate form's widgets: each field's label, hint and choices, in the form's order.

The text fields go through :func:`gpuplan.tui.estimate_form.check_form` (the CLI's
parsers and limits) into :class:`gpuplan.usecases.planner.estimate.EstimateArgs`; the choices
are the planner's own enums' values, so the form never offers less than the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, Select

from gpuplan.tui.table import FieldInput

PRECISIONS = ("bf16", "fp16", "fp8", "fp4", "tf32", "fp32")
METHODS = ("pretrain", "full", "lora", "qlora")
""":class:`gpuplan.core.planner.workload.Method` (a test keeps them equal)."""
OBJECTIVES = ("cost", "time")


@dataclass(frozen=True)
class Field:
    """One row of the form: a text box (``hint``) or a dropdown (``choices``)."""

    id: str
    label: str
    hint: str = ""
    choices: tuple[str, ...] = ()


FIELDS: tuple[Field, ...] = (
    Field("params", "params", "7B"),
    Field("tokens", "tokens", "140B"),
    Field("method", "method", choices=METHODS),
    Field("lora_rank", "LoRA rank", "16"),
    Field("gpus", "GPU count", "8-64"),
    Field("gpu", "GPU", "any: H100"),
    Field("deadline", "deadline", "14d, 36h"),
    Field("budget", "budget $", "20k"),
    Field("pricing", "pricing", "any: spot"),
    Field("policy", "policy", "file, name"),
    Field("precision", "precision", choices=PRECISIONS),
    Field("objective", "rank by", choices=OBJECTIVES),
)
"""Hints fit the box at every width (a test measures them at 80 columns)."""
TEXT_FIELDS = tuple(f.id for f in FIELDS if not f.choices)
CHOICE_FIELDS = tuple(f.id for f in FIELDS if f.choices)
DEFAULTS = {"params": "7B", "tokens": "140B"}
FORM_WIDTH = 26


def compose_form() -> ComposeResult:
    """One labelled row per field, then the keys' hint."""
    for f in FIELDS:
        with Horizontal():
            yield Label(f.label)
            if f.choices:
                options = [(c, c) for c in f.choices]
                yield Select(options, value=f.choices[0], allow_blank=False, id=f.id, compact=True)
            else:
                yield FieldInput(DEFAULTS.get(f.id, ""), placeholder=f.hint, id=f.id, compact=True)
