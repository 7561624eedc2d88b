"""Which flag needs which flag or mode: one table, checked in one place before a command runs.

A flag that does nothing in the combination given (``fleet --since nan`` without
``--report``, ``--wide`` with ``--json``) is bad input: exit 2 with a line naming the
flag it needs or the mode it does nothing in, never silently ignored with exit 0.
:data:`RULES` lists every such flag per command; ``tests/cli/test_flag_rules.py`` walks
every command's flags and fails for one that is in neither :data:`RULES` nor
:data:`ALWAYS` (meaningful in every combination), so a new flag must be placed.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

from gpuplan.core.errors import InputError


@dataclass(frozen=True)
class Needs:
    """``flag`` does something only with one of ``any_of`` given."""

    flag: str
    any_of: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class Useless:
    """``flag`` does nothing when one of ``modes`` is given (and none of ``unless``)."""

    flag: str
    modes: tuple[str, ...]
    why: str
    unless: tuple[str, ...] = ()


Rule = Needs | Useless


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_WIDE = "--wide widens tables"


def _wide(*modes: str) -> Useless:
    return Useless("--wide", modes, _WIDE)


_REPORT = "the waste report reads the ledger only"
_SURVEY = "the fleet survey"
_TRACES = "an audit of a trace folder calls no cloud"
_GENERATED = "they shape the generated fleet"
_COMPARED = "the comparison shows one row per GPU, at the cheapest pricing"
_SWEEP = "a sweep tries its own windows and thresholds"


def _compared(flag: str) -> Useless:
    return Useless(flag, ("--compare-gpus",), _COMPARED)


RULES: dict[str, tuple[Rule, ...]] = {
    "catalog": (_wide("--json", "--csv"),),
    "gpus": (
        Needs("--per-cloud", ("--prices",), "the price columns are what it splits"),
        Needs("--provider", ("--prices",), "GPUs are filtered by cloud only in prices"),
        Needs("--region", ("--prices",), "GPUs are filtered by region only in prices"),
        Needs("--include-stale", ("--prices",), "prices are ranked only in prices"),
        _wide("--json", "--csv"),
    ),
    "estimate": (
        Needs("--db", ("--policy",), "the ledger is read for the policy's remaining budget"),
        Needs("--all", ("--json", "--csv"), "the table shows --top rows"),
        Useless("--show-infeasible", ("--csv",), "the CSV lists feasible options only"),
        Useless(
            "--show-infeasible", ("--all",), "--all lists every left-out option in full already"
        ),
        Useless(
            "--explain",
            ("--json", "--csv"),
            "its text would break the JSON/CSV, which carry each option's mfu_factors, "
            "memory and notes",
        ),
        *map(_compared, ("--top", "--explain", "--show-infeasible", "--objective", "--csv")),
        _compared("--policy"),
        Useless("--all", ("--compare-gpus",), _COMPARED),
        _wide("--json", "--csv"),
    ),
    "budget": (_wide("--json"),),
    "bill reconcile": (_wide("--json"),),
    "simulate": (
        Useless("--seed", ("--traces",), _GENERATED),
        Useless("--instances", ("--traces",), _GENERATED),
        Useless("--hours", ("--traces",), _GENERATED),
        Useless("--interval", ("--sweep",), "a sweep tries its own intervals"),
        Useless("--window", ("--sweep",), _SWEEP),
        Useless("--live-window", ("--sweep",), _SWEEP),
        # With --traces the threshold also says which trace minutes count as idle.
        Useless("--threshold", ("--sweep",), _SWEEP, unless=("--traces",)),
        _wide("--json"),
    ),
    "fleet": (
        Needs("--since", ("--report",), "it is the report's period"),
        Needs("--by", ("--report",), "it groups the report"),
        Needs("--db", ("--report",), "the survey reads no ledger"),
        Useless("--policy", ("--report",), _REPORT),
        Useless("--concurrency", ("--report",), _REPORT),
        Useless("--shard", ("--report",), _REPORT),
        Useless("--shards", ("--report",), _REPORT),
        Useless("--catalog-dir", ("--report",), _REPORT),
        _wide("--json"),
    ),
    "stop-idle": (_wide("--json"),),
    "schedule": (_wide("--json"),),
    "history": (_wide("--json"),),
    "savings": (_wide("--json"),),
    "waste": (_wide("--json"),),
    "audit": (
        Useless("--since", ("--traces",), _TRACES),
        Useless("--concurrency", ("--traces",), _TRACES),
        Useless("--db", ("--traces",), _TRACES),
        _wide("--json", "--csv"),
    ),
}
"""Per command (``catalog refresh`` and ``policy check`` by their two words), the flags
that need another flag or do nothing in a mode."""

ALWAYS: dict[str, frozenset[str]] = {
    "catalog": _words(
        "--catalog-dir --csv --gpu --gpus --json --max-age --max-hourly --min-gpus "
        "--include-stale --pricing --provider --region --sort --source --top"
    ),
    "catalog refresh": _words(
        "--catalog-dir --dry-run --force --json --no-discover --provider --region"
    ),
    "catalog import": _words("--catalog-dir --dry-run --force --format --json --provider"),
    "gpus": _words("--catalog-dir --csv --gpu --json --prices"),
    "estimate": _words(
        "--active-params --budget --catalog-dir --checkpoint-every --compare-gpus "
        "--currency --deadline --experts --flops-per-sample --fsdp --fx "
        "--global-batch --gpu --gpus --heads --hidden --include-stale --job --json --layers "
        "--lora-rank "
        "--measured-on --method --mfu --micro-batch --optimizer --params "
        "--precision --price-per-gpu-hour --pricing --provider --recompute "
        "--region --reuse-commitment --samples --seq-len --throughput "
        "--tokens --top-k --utilization --vocab --zero"
    ),
    "policy check": _words("--db --json"),
    "policy show": _words("--json"),
    "budget": _words("--by --concurrency --db --json --policy"),
    "bill sync": _words("--db --json --policy --since"),
    "bill reconcile": _words("--db --json --policy --since"),
    "simulate": _words("--catalog-dir --json --policy --sweep --traces --write-traces"),
    "tui": _words("--catalog-dir --concurrency --db --policies --policy"),
    "fleet": _words("--json --report"),
    "stop-idle": _words(
        "--apply --catalog-dir --concurrency --db --json --lock-wait --policy --shard --shards"
    ),
    "schedule": _words("--apply --catalog-dir --concurrency --db --json --lock-wait --policy"),
    "snooze": _words("--clear --concurrency --for --json --policy"),
    "restore": _words("--apply --db --json --policy --scope"),
    "history": _words("--db --json --kind --limit --policy"),
    "savings": _words("--by --db --json --policy"),
    "waste": _words("--by --db --json --since"),
    "audit": _words("--by --catalog-dir --csv --json --period --policy --traces"),
    "exporter": _words("--catalog-dir --db --json --listen --team-label --textfile"),
}
"""Per command, the flags meaningful in every combination the parser accepts."""


def check_flags(
    command: str, parser: argparse.ArgumentParser, args: argparse.Namespace, words: Sequence[str]
) -> None:
    """:class:`InputError` for the first flag in ``RULES[command]`` that does nothing here."""
    given = {flag for flag in _flags(parser) if _given(parser, args, words, flag)}
    rules = RULES.get(command, ())
    # A flag's mode first: ``--all --compare-gpus`` is told about the comparison, not --json.
    for rule in sorted(rules, key=lambda r: isinstance(r, Needs)):
        if rule.flag not in given:
            continue
        if isinstance(rule, Needs) and not given & set(rule.any_of):
            raise InputError(
                f"{command}: {rule.flag} goes with {' or '.join(rule.any_of)} ({rule.why}); "
                f"without it {rule.flag} would do nothing"
            )
        if isinstance(rule, Useless) and not given & set(rule.unless):
            mode = next((m for m in rule.modes if m in given), None)
            if mode is not None:
                raise InputError(
                    f"{command}: {rule.flag} does nothing with {mode} ({rule.why}); "
                    f"leave out one of them"
                )


def check_before_action(
    parser: argparse.ArgumentParser, args: argparse.Namespace, words: Sequence[str], action: str
) -> None:
    """:class:`InputError` for a listing flag written before ``catalog refresh``/``import``:
    the action reads only the flags after its word (``catalog --gpu H100 refresh``)."""
    given = [flag for flag in _flags(parser) if _given(parser, args, words, flag)]
    if given:
        flag = sorted(given, key=lambda f: min(_at(words, f), default=len(words)))[0]
        raise InputError(
            f"catalog: {flag} before {action} does nothing ({action} reads the flags after "
            f"its word); write it after {action} if {action} takes it: "
            f"gpuplan catalog {action} --help"
        )


def _at(words: Sequence[str], flag: str) -> list[int]:
    return [i for i, w in enumerate(words) if w == flag or w.startswith(flag + "=")]


def _flags(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {s: a for a in parser._actions for s in a.option_strings if s.startswith("--")}


def _given(
    parser: argparse.ArgumentParser, args: argparse.Namespace, words: Sequence[str], flag: str
) -> bool:
    """True when ``flag`` was written: by name (``--x v``, ``--x=v``) or by an abbreviation
    argparse accepted (its value then differs from the default)."""
    if any(w == flag or w.startswith(flag + "=") for w in words):
        return True
    action = _flags(parser)[flag]
    value = getattr(args, action.dest, action.default)
    return bool(value != action.default)


def command_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each command's parser by its words (``fleet``, ``policy check``), for the walk."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                inner = command_parsers(sub)
                found.update({f"{name} {k}": v for k, v in inner.items()} if inner else {})
                if not inner:
                    found[name] = sub
    return found
