"""The metric names a PromQL expression reads, and the names gpuplan's exporter emits."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

import promql_parser as pq

from gpuplan.usecases.audit.exporter import collect


def metric_names(expr: str) -> set[str]:
    """Every metric a query selects, found by walking the parsed expression."""
    found: set[str] = set()
    stack: list[object] = [pq.parse(expr)]
    while stack:
        node = stack.pop()
        if isinstance(node, pq.VectorSelector):
            if not node.name:
                raise AssertionError(f"a selector without a metric name in {expr!r}")
            found.add(node.name)
        elif isinstance(node, pq.MatrixSelector):
            stack.append(node.vector_selector)
        elif isinstance(node, pq.BinaryExpr):
            stack += [node.lhs, node.rhs]
        elif isinstance(node, pq.Call):
            stack += list(node.args)
        elif isinstance(node, pq.AggregateExpr | pq.ParenExpr | pq.UnaryExpr | pq.SubqueryExpr):
            stack.append(node.expr)
    return found


def exported_names() -> set[str]:
    """The metric names of one scrape (counters with ``_total``): every family is
    emitted, with or without samples, so an empty ledger names them all."""
    with tempfile.TemporaryDirectory() as folder:
        families = collect(
            str(Path(folder) / "no-ledger.db"),
            {},
            now=datetime.now(UTC),
            team_label="team",
            prices=[],
        )
    return {f.name for f in families}


def label_names(expr: str) -> set[str]:
    """Every label a query matches on or groups by."""
    found: set[str] = set()
    stack: list[object] = [pq.parse(expr)]
    while stack:
        node = stack.pop()
        if isinstance(node, pq.VectorSelector):
            found |= {m.name for m in node.matchers.matchers}
        elif isinstance(node, pq.MatrixSelector):
            stack.append(node.vector_selector)
        elif isinstance(node, pq.BinaryExpr):
            stack += [node.lhs, node.rhs]
            matching = node.modifier.matching if node.modifier is not None else None
            if matching is not None:
                found |= set(matching.labels)
        elif isinstance(node, pq.Call):
            stack += list(node.args)
        elif isinstance(node, pq.AggregateExpr):
            stack.append(node.expr)
            if node.modifier is not None:
                found |= set(node.modifier.labels)
        elif isinstance(node, pq.ParenExpr | pq.UnaryExpr | pq.SubqueryExpr):
            stack.append(node.expr)
    return found


def exported_labels() -> dict[str, set[str]]:
    """Each exported metric's label names."""
    with tempfile.TemporaryDirectory() as folder:
        families = collect(
            str(Path(folder) / "no-ledger.db"), {}, now=datetime.now(UTC), team_label="team",
            prices=[],
        )  # fmt: skip
    return {f.name: set(f.label_names) for f in families}
