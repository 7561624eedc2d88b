"""Reads a YAML policy file into a :class:`~gpuplan.core.policy.Policy`.

Promise: whatever the bytes, the answer is a policy or a :class:`PolicyFileError`
whose every line names the file, line, column and key path (``x.yaml:7:3:
idle.threshold_percent: must be between 0 and 100, got 150``), never a traceback.
Duplicate keys, tabs in indentation, empty files, binary data, several documents and
YAML tags that build objects are refused; so are scalars longer than 4,096 characters,
integers with absurd digit counts and impossible dates. The file is read through
:mod:`gpuplan.loaders.safe_read` (regular files up to 256 KiB; FIFOs and devices refused
before reading). ``${NAME}`` in ``notify.webhook_url`` and
``idle.metrics.prometheus.url`` expands from the environment given, but only for
``GPUPLAN_*`` names and names the policy lists in ``env_allow`` (an unset variable is
an error); the expanded URLs are then checked (https to a public host for the webhook).
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from pydantic import ValidationError

from gpuplan.core.catalog.gpus import GpuTable
from gpuplan.core.errors import DataError, InputError
from gpuplan.core.policy import KeyPath, Policy, PolicyProblem, check_rules, resolve_gpus
from gpuplan.core.policy.fields import is_union_tag
from gpuplan.core.policy.secrets import url_problems
from gpuplan.core.urls import Split
from gpuplan.core.wording import plural
from gpuplan.loaders.holidays import with_holiday_files
from gpuplan.loaders.policy_errors import describe_error, follows_from, format_path, prune
from gpuplan.loaders.safe_read import POLICY_LIMIT, read_bytes

MAX_BYTES = POLICY_LIMIT
MAX_NODES = 20_000
MAX_DEPTH = 32
MAX_SHOWN = 3
MAX_SCALAR = 4096
MAX_PRUNES = 8
_ENV_REF = re.compile(r"\$\{([^}]*)\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
ENV_PREFIX = "GPUPLAN_"
EXPANDED: tuple[KeyPath, ...] = (
    ("notify", "webhook_url"),
    ("idle", "metrics", "prometheus", "url"),
)
"""The keys where ``${NAME}`` is expanded; elsewhere it is plain text."""
_PLAIN_TAGS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")
Mark = tuple[int, int]
"""1-based line and column."""


class PolicyFileError(InputError):
    """One or more problems in a policy file, each a :class:`DataError` with its place."""

    def __init__(self, problems: list[DataError]) -> None:
        problems = sorted(problems, key=lambda p: (p.line or 0, p.column or 0))
        lines = [str(p) for p in problems[:MAX_SHOWN]]
        if len(problems) > MAX_SHOWN:
            lines.append(f"(and {plural(len(problems) - MAX_SHOWN, 'more problem')} in this file)")
        super().__init__("\n".join(lines))
        self.problems = problems

    @property
    def lines(self) -> tuple[str, ...]:
        """Every problem, one line each, as ``gpuplan policy check`` prints them."""
        return tuple(str(p) for p in self.problems)


class _Marks:
    """Where each key and value of the document starts, by key path."""

    def __init__(self) -> None:
        self.keys: dict[KeyPath, Mark] = {}
        self.values: dict[KeyPath, Mark] = {}

    def at(self, path: KeyPath, *, key: bool = False) -> Mark | None:
        """The closest known place for ``path``: itself, else its nearest parent."""
        table = self.keys if key else self.values
        for cut in range(len(path), -1, -1):
            found = table.get(path[:cut]) or self.values.get(path[:cut])
            if found is not None:
                return found
        return None


def load_policy_file(
    path: str | os.PathLike[str],
    *,
    split: Split,
    gpus: GpuTable | None = None,
    environ: Mapping[str, str] | None = None,
) -> Policy:
    """The policy in ``path``; ``gpus`` checks ``planning.allowed_gpus`` when given;
    ``split`` is the URL parser that fetches the policy's URLs (httpx's, from the edge)."""
    shown = str(path)
    data = read_bytes(path, limit=MAX_BYTES, what="policy file")
    return parse_policy(data, shown, split=split, gpus=gpus, environ=environ)


def parse_policy(
    data: bytes | str,
    path: str,
    *,
    split: Split,
    gpus: GpuTable | None = None,
    environ: Mapping[str, str] | None = None,
) -> Policy:
    """The policy in ``data`` (the contents of ``path``); see the module docstring."""
    parsed = collect_problems(data, path, split=split, gpus=gpus, environ=environ)
    if parsed.problems or parsed.policy is None:
        raise PolicyFileError(parsed.problems)
    return parsed.policy


@dataclass
class Parsed:
    """Every problem found in one file, the policy when there is none, and where each
    key sits (for warnings that point at a line)."""

    policy: Policy | None
    problems: list[DataError]
    marks: _Marks
    raw: dict[Any, Any] = field(default_factory=dict)


def collect_problems(
    data: bytes | str,
    path: str,
    *,
    split: Split,
    gpus: GpuTable | None = None,
    environ: Mapping[str, str] | None = None,
) -> Parsed:
    """All problems of the file at once (``policy check``): environment references, every
    field, then, with the broken keys left out, the rules across keys and the GPU names.

    A file that cannot be read as a mapping raises :class:`DataError` (one problem).
    """
    text = _decode(data, path)
    raw, marks = _compose(text, path)
    if raw is None:
        raise DataError(path, "no policy in this file (only comments or '---')", line=1)
    if not isinstance(raw, dict):
        got = "a list" if isinstance(raw, list) else f"a single value ({raw!r:.40})"
        raise DataError(
            path, f"expected a mapping of policy keys (version: 1, name: ...), got {got}", line=1
        )
    env_problems = _expand_env(raw, marks, path, os.environ if environ is None else environ)
    problems = list(env_problems)
    trial = copy.deepcopy(raw)
    pruned = {bad.field for bad in env_problems if prune(trial, bad.field)}
    policy: Policy | None = None
    for _ in range(MAX_PRUNES):
        try:
            policy = Policy.model_validate(trial)
            break
        except ValidationError as exc:
            errors = [_validation_problem(err, marks, path) for err in exc.errors()]
            # A required key left out for its bad value is then "missing": not a second error.
            own = [
                e
                for e, err in zip(errors, exc.errors(), strict=True)
                if not (err["type"] == "missing" and e.field in pruned)
            ]
            problems.extend(e for e in own if str(e) not in {str(p) for p in problems})
            if not all(prune(trial, e.field) for e in errors):
                break
            pruned.update(e.field for e in errors)
    if policy is None:
        return Parsed(None, problems, marks, raw)
    found: list[PolicyProblem] = [
        p
        for p in (*check_rules(policy), *url_problems(policy, split))
        if not follows_from(p, pruned)
    ]
    if gpus is not None:
        policy, unknown = resolve_gpus(policy, gpus)
        found.extend(unknown)
    policy, in_files, at_keys = with_holiday_files(policy, path)
    problems.extend(in_files)
    found.extend(PolicyProblem(key, message) for key, message in at_keys)
    problems.extend(place(p.path, p.message, marks, path) for p in found)
    return Parsed(None if problems else policy, problems, marks, raw)


def _decode(data: bytes | str, path: str) -> str:
    if isinstance(data, str):
        text = data
    else:
        if len(data) > MAX_BYTES:
            raise DataError(path, f"too large for a policy file ({len(data)} bytes)")
        if b"\x00" in data:
            raise DataError(path, "binary data, not a YAML policy file")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DataError(
                path, f"not UTF-8 text (bad byte at offset {exc.start}); is this a policy file?"
            ) from None
    if not text.strip():
        raise DataError(path, "empty file; a policy needs at least 'version: 1' and 'name:'")
    for number, line in enumerate(text.splitlines(), start=1):
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if "\t" in indent:
            raise DataError(
                path,
                "tab in indentation; YAML indents with spaces only",
                line=number,
                column=indent.index("\t") + 1,
            )
    return text


def _compose(text: str, path: str) -> tuple[Any, _Marks]:
    try:
        loader = yaml.SafeLoader(text)
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        raise DataError(
            path,
            f"not valid YAML: character #x{exc.character:04x} is not allowed",
            line=line,
            column=column,
        ) from None
    marks = _Marks()
    try:
        _check_depth(text, path)
        node = loader.get_single_node()
        if node is None:
            raise DataError(path, "no policy in this file (only comments or '---')", line=1)
        return _build(node, (), loader, marks, path, [0]), marks
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        if exc.context_mark is not None and exc.problem == "could not find expected ':'":
            mark = exc.context_mark  # the key without its colon, not where the scan gave up
        problem = ", ".join(p for p in (exc.context, exc.problem) if p) or "unreadable"
        if mark is None:
            raise DataError(path, f"not valid YAML: {problem}") from None
        raise DataError(
            path, f"not valid YAML: {problem}", line=mark.line + 1, column=mark.column + 1
        ) from None
    except yaml.YAMLError as exc:
        raise DataError(path, f"not valid YAML: {exc}") from None
    except RecursionError:
        raise DataError(path, "not valid YAML: nested too deeply") from None
    finally:
        loader.dispose()


def _check_depth(text: str, path: str) -> None:
    """Refuse deep nesting from the event stream (no recursion) before composing a tree."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                mark = event.start_mark
                raise DataError(
                    path,
                    f"nested more than {MAX_DEPTH} levels deep; not a policy file",
                    line=mark.line + 1 if mark else None,
                    column=mark.column + 1 if mark else None,
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _build(
    node: yaml.Node,
    path: KeyPath,
    loader: yaml.SafeLoader,
    marks: _Marks,
    file: str,
    count: list[int],
) -> Any:
    """Plain data from a YAML node, recording where every key and value starts."""
    count[0] += 1
    if len(path) > MAX_DEPTH:
        raise _at(file, f"nested more than {MAX_DEPTH} levels deep; not a policy file", node)
    if count[0] > MAX_NODES:
        raise DataError(file, f"more than {MAX_NODES} values (alias bomb?); not a policy file")
    marks.values[path] = _mark(node)
    if not isinstance(node, yaml.ScalarNode) and node.tag not in _PLAIN_TAGS:
        raise _at(file, f"not valid YAML here: unsupported tag {node.tag}", node)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = (
                _scalar(key_node, loader, file, path)
                if isinstance(key_node, yaml.ScalarNode)
                else loader.construct_object(key_node, deep=True)
            )
            if isinstance(key, bool) or not isinstance(key, str | int):
                raise _at(file, "keys must be plain words", key_node)
            if key in out:
                first = marks.keys.get((*path, key))
                again = f" (first at line {first[0]})" if first else ""
                raise _at(file, f"duplicate key{again}", key_node, format_path((*path, key)))
            marks.keys[(*path, key)] = _mark(key_node)
            out[key] = _build(value_node, (*path, key), loader, marks, file, count)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [
            _build(item, (*path, index), loader, marks, file, count)
            for index, item in enumerate(node.value)
        ]
    return _scalar(node, loader, file, path)


def _scalar(node: yaml.Node, loader: yaml.SafeLoader, file: str, path: KeyPath) -> Any:
    """A scalar's value; numbers with absurd digit counts and impossible dates refused."""
    if len(str(node.value)) > MAX_SCALAR:
        raise _at(file, f"value longer than {MAX_SCALAR} characters", node, format_path(path))
    try:
        return loader.construct_object(node, deep=True)
    except (ValueError, OverflowError) as exc:
        reason = "a number too long to be a policy value" if "digits" in str(exc) else str(exc)
        raise _at(file, f"not a valid value: {reason}", node, format_path(path)) from None


def _mark(node: yaml.Node) -> Mark:
    return (node.start_mark.line + 1, node.start_mark.column + 1)


def _at(file: str, message: str, node: yaml.Node, field: str | None = None) -> DataError:
    line, column = _mark(node)
    return DataError(file, message, line=line, column=column, field=field)


def _expand_env(
    raw: dict[Any, Any], marks: _Marks, file: str, environ: Mapping[str, str]
) -> list[DataError]:
    """Expand ``${NAME}`` in the URL keys that may hold secrets, in place.

    Only ``GPUPLAN_*`` names and names listed in ``env_allow`` expand; any other name,
    an unset or empty variable, or a malformed reference is a problem at that key.
    """
    allowed = raw.get("env_allow")
    extra = {n for n in allowed if isinstance(n, str)} if isinstance(allowed, list) else set()
    problems: list[DataError] = []
    for key_path in EXPANDED:
        parent: Any = raw
        for part in key_path[:-1]:
            parent = parent.get(part) if isinstance(parent, dict) else None
        if not isinstance(parent, dict) or not isinstance(parent.get(key_path[-1]), str):
            continue

        original = parent[key_path[-1]]

        def substitute(
            match: re.Match[str], where: KeyPath = key_path, text: str = original
        ) -> str:
            name = match.group(1)
            message = _env_refusal(name, extra, environ) or _in_host(text, match)
            if message is None:
                return environ[name]
            problems.append(place(where, message, marks, file))
            return ""

        parent[key_path[-1]] = _ENV_REF.sub(substitute, parent[key_path[-1]])
    return problems


def _in_host(text: str, match: re.Match[str]) -> str | None:
    """A refusal when ``${NAME}`` is part of the URL's host (which is shown and logged);
    the whole URL, the user info (credentials) and the path may come from variables."""
    if match.group(0) == text:
        return None
    start = text.find("://")
    if start < 0 or match.start() < start:
        return "a variable may fill the whole URL, its user info or its path, not its scheme"
    authority_end = text.find("/", start + 3)
    authority_end = len(text) if authority_end < 0 else authority_end
    host_start = text.rfind("@", start + 3, authority_end) + 1 or start + 3
    if host_start <= match.start() < authority_end:
        return (
            "a variable may fill the whole URL, its user info or its path, not part of its "
            "host (hosts are shown in messages)"
        )
    return None


def _env_refusal(name: str, extra: set[str], environ: Mapping[str, str]) -> str | None:
    """Why ``${name}`` may not expand, or None."""
    if not _ENV_NAME.match(name):
        return f"'${{{name[:40]}}}' is not a valid environment variable reference"
    if not name.startswith(ENV_PREFIX) and name not in extra:
        return (
            f"environment variable {name} may not be expanded here: only {ENV_PREFIX}* "
            "names, or names listed in env_allow"
        )
    if not environ.get(name):
        return f"environment variable {name} is not set (or empty); set it or write the URL"
    return None


def _validation_problem(err: Any, marks: _Marks, file: str) -> DataError:
    loc: KeyPath = tuple(part for part in err["loc"] if not is_union_tag(part))
    on_key = bool(loc) and (err["type"] == "extra_forbidden" or loc[-1] == "[key]")
    if loc and loc[-1] == "[key]":
        loc = loc[:-1]
    return place(loc, describe_error(err, loc), marks, file, key=on_key)


def place(loc: KeyPath, message: str, marks: _Marks, file: str, *, key: bool = False) -> DataError:
    mark = marks.at(loc, key=key)
    line, column = mark if mark is not None else (None, None)
    return DataError(file, message, line=line, column=column, field=format_path(loc) or None)
