"""A small PromQL evaluator over recorded series, for the alert rules and the dashboard.

The expressions are parsed by ``promql_parser`` (a port of Prometheus's own parser);
this module evaluates the subset gpuplan's rules and panels use: selectors with ``=``
matchers, numbers, parentheses, ``time()``, ``absent()``, ``sum``/``max``/``min``/
``count`` with ``by``, arithmetic and comparisons (filtering, with ``on(...)`` matching),
``increase()`` over a range. Anything else raises NotImplementedError, so a rule that
uses more fails its test instead of being judged by a guess. It also reads promtool's
``input_series`` notation (``1+2x3``, ``5x10``, ``_``) so the Python check and
``promtool test rules`` read the same recorded series.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import promql_parser as pq

Labels = tuple[tuple[str, str], ...]
Vector = dict[Labels, float]
_SERIES = re.compile(r"^(?P<name>[a-zA-Z_:][\w:]*)(?:\{(?P<labels>.*)\})?$")
_LABEL = re.compile(r'(\w+)\s*=\s*"([^"]*)"')
_NUMBER = r"\d+(?:\.\d+)?(?:e[+-]?\d+)?"
_STEP = re.compile(rf"^(?P<a>-?{_NUMBER})(?:(?P<sign>[+-])(?P<b>{_NUMBER}))?x(?P<n>\d+)$")


def parse_values(text: str) -> list[float | None]:
    """promtool's expanding notation: ``a+bxN`` is a, a+b, ... a+N*b; ``axN`` is a N+1
    times; ``_`` is a missing sample; a plain number is itself."""
    out: list[float | None] = []
    for word in text.split():
        if word == "_":
            out.append(None)
            continue
        step = _STEP.match(word)
        if step is None:
            out.append(float(word))
            continue
        a, n = float(step["a"]), int(step["n"])
        b = float(step["b"] or 0) * (-1 if step["sign"] == "-" else 1)
        out.extend(a + i * b for i in range(n + 1))
    return out


@dataclass
class Series:
    labels: Labels
    """Sorted label pairs, ``__name__`` included."""
    values: list[float | None]
    """One sample per ``interval`` from time 0."""


def parse_series(selector: str, values: str) -> Series:
    match = _SERIES.match(selector.strip())
    if match is None:
        raise ValueError(f"not a series: {selector!r}")
    labels = dict(_LABEL.findall(match["labels"] or ""))
    labels["__name__"] = match["name"]
    return Series(tuple(sorted(labels.items())), parse_values(values))


class Evaluator:
    """Instant queries at ``t`` seconds over series sampled every ``interval`` seconds."""

    LOOKBACK = 300.0  # Prometheus's default staleness window

    def __init__(self, series: list[Series], interval: float) -> None:
        self.series, self.interval = series, interval

    def query(self, expr: str, t: float) -> Vector | float:
        return self._eval(pq.parse(expr), t)

    def _sample(self, s: Series, t: float) -> float | None:
        index = int(t // self.interval)
        while index >= 0 and (t - index * self.interval) <= self.LOOKBACK:
            if index < len(s.values) and s.values[index] is not None:
                return s.values[index]
            index -= 1
        return None

    def _selected(self, node: object) -> list[Series]:
        name = getattr(node, "name", None)
        tests: list[tuple[str, str, str]] = [
            (m.name, str(m.op).removeprefix("MatchOp."), m.value)
            for m in node.matchers.matchers  # type: ignore[attr-defined]
        ]
        if name:
            tests.append(("__name__", "Equal", name))
        for _, op, _ in tests:
            if op not in ("Equal", "Re"):
                raise NotImplementedError(f"matcher {op}")

        def keep(s: Series) -> bool:
            labels = dict(s.labels)
            return all(
                labels.get(k) == v if op == "Equal" else re.fullmatch(v, labels.get(k, ""))
                for k, op, v in tests
            )

        return [s for s in self.series if keep(s)]

    def _eval(self, node: object, t: float) -> Vector | float:
        if isinstance(node, pq.NumberLiteral):
            return float(node.val)
        if isinstance(node, pq.ParenExpr):
            return self._eval(node.expr, t)
        if isinstance(node, pq.VectorSelector):
            out: Vector = {}
            for s in self._selected(node):
                value = self._sample(s, t)
                if value is not None:
                    out[s.labels] = value
            return out
        if isinstance(node, pq.Call):
            return self._call(node, t)
        if isinstance(node, pq.AggregateExpr):
            return self._aggregate(node, t)
        if isinstance(node, pq.BinaryExpr):
            return self._binary(node, t)
        raise NotImplementedError(type(node).__name__)

    def _call(self, node: pq.Call, t: float) -> Vector | float:
        name = node.func.name
        if name == "time":
            return t
        if name == "absent":
            found = self._eval(node.args[0], t)
            return {} if found else {(): 1.0}
        if name == "increase":
            matrix = node.args[0]
            window = matrix.range.total_seconds()
            out: Vector = {}
            for s in self._selected(matrix.vector_selector):
                now, then = self._sample(s, t), self._sample(s, max(0.0, t - window))
                if now is not None and then is not None:
                    out[_drop_name(s.labels)] = max(0.0, now - then)
            return out
        raise NotImplementedError(f"function {name}")

    def _aggregate(self, node: pq.AggregateExpr, t: float) -> Vector:
        inner = self._eval(node.expr, t)
        if not isinstance(inner, dict):
            raise NotImplementedError("aggregation of a scalar")
        by = list(node.modifier.labels) if node.modifier is not None else []
        if node.modifier is not None and str(node.modifier.type) != "AggModifierType.By":
            raise NotImplementedError("without()")
        groups: dict[Labels, list[float]] = {}
        for labels, value in inner.items():
            key = tuple((k, v) for k, v in labels if k in by)
            groups.setdefault(key, []).append(value)
        op = str(node.op)
        fold = {"sum": sum, "max": max, "min": min, "count": len}
        if op not in fold:
            raise NotImplementedError(f"aggregation {op}")
        return {key: float(fold[op](values)) for key, values in groups.items()}

    def _binary(self, node: pq.BinaryExpr, t: float) -> Vector | float:
        op = str(node.op)
        left, right = self._eval(node.lhs, t), self._eval(node.rhs, t)
        if isinstance(left, float) and isinstance(right, float):
            return _apply(op, left, right)
        on = None
        if node.modifier is not None and node.modifier.matching is not None:
            on = list(node.modifier.matching.labels)
        comparison = op in ("==", "!=", ">", "<", ">=", "<=")
        out: Vector = {}
        if isinstance(left, dict) and isinstance(right, float):
            pairs = [(k, v, right) for k, v in left.items()]
        elif isinstance(left, float) and isinstance(right, dict):
            pairs = [(k, left, v) for k, v in right.items()]
        else:
            assert isinstance(left, dict) and isinstance(right, dict)
            index = {_key(k, on): v for k, v in right.items()}
            pairs = [(k, v, index[_key(k, on)]) for k, v in left.items() if _key(k, on) in index]
        for labels, a, b in pairs:
            result = _apply(op, a, b)
            if comparison:
                if result:
                    out[labels] = a if isinstance(left, dict) else b  # the vector side
            else:
                out[_drop_name(labels)] = result
        return out


def _key(labels: Labels, on: list[str] | None) -> Labels:
    if on is None:
        return _drop_name(labels)
    return tuple((k, v) for k, v in labels if k in on)


def _drop_name(labels: Labels) -> Labels:
    return tuple((k, v) for k, v in labels if k != "__name__")


def _apply(op: str, a: float, b: float) -> float:
    ops: Mapping[str, float] = {
        "+": a + b, "-": a - b, "*": a * b,
        "/": a / b if b else float("nan"),
        "==": float(a == b), "!=": float(a != b), ">": float(a > b), "<": float(a < b),
        ">=": float(a >= b), "<=": float(a <= b),
    }  # fmt: skip
    if op not in ops:
        raise NotImplementedError(f"operator {op}")
    return ops[op]


def duration_seconds(text: str) -> float:
    """A Prometheus duration (``1h``, ``30m``, ``90s``, ``1h30m``) in seconds."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    parts = re.findall(r"(\d+)([smhdw])", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"not a duration: {text!r}")
    return float(sum(int(n) * units[u] for n, u in parts))
