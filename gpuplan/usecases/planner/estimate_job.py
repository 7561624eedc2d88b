"""Job files for ``gpuplan estimate --job``: read, checked, merged under the flags.

A job file is YAML or JSON with the same keys as the flags; an unknown key is refused
with its line and the closest known key, and an error about a value the file set names
the file and the key.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

from gpuplan.core.errors import DataError, InputError
from gpuplan.usecases.planner.estimate import EstimateArgs, flag_of


def read_job_file(path: str) -> dict[str, Any]:
    """A YAML or JSON job file: a mapping with the same keys as the flags."""
    from gpuplan.loaders.safe_read import JOB_FILE_LIMIT, load_yaml_tree, read_text

    file = Path(path)
    text = read_text(path, limit=JOB_FILE_LIMIT, what="job file")
    import yaml

    try:
        data = (
            json.loads(text)
            if file.suffix.lower() == ".json"
            else load_yaml_tree(text, path, what="job file")
        )
    except json.JSONDecodeError as exc:
        raise DataError(path, f"not valid JSON: {exc.msg}", line=exc.lineno) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if problem == "could not find expected ':'":  # the key without its colon
            mark = getattr(exc, "context_mark", None) or mark
        line = mark.line + 1 if mark is not None else None
        raise DataError(path, f"not valid YAML: {problem}", line=line) from None
    except (ValueError, OverflowError, RecursionError) as exc:
        reason = (
            "a number too long" if "digits" in str(exc) else str(exc)[:80] or "nested too deeply"
        )
        raise DataError(path, f"not a valid job file: {reason}") from None
    if not isinstance(data, dict):
        raise DataError(path, "expected a mapping of flag names to values")
    known = {f.name for f in fields(EstimateArgs)}
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = str(key).replace("-", "_")
        if name not in known:
            raise _unknown_key(path, text, str(key), known)
        out[name] = value
    return out


def job_error(exc: InputError, path: str, keys: set[str]) -> InputError:
    """An error about a flag the job file set, re-said with the file and the key."""
    for key in keys:
        flag = flag_of(key)
        if exc.message.startswith(flag + ":") or exc.message.startswith(flag + " "):
            return DataError(path, exc.message, field=key.replace("_", "-"))
    return exc


def _unknown_key(path: str, text: str, key: str, known: set[str]) -> DataError:
    """The unknown key's line, and the closest known key (``tokns`` -> ``tokens``)."""
    import difflib
    import re

    line = next(
        (
            number
            for number, content in enumerate(text.splitlines(), start=1)
            if re.match(rf"""\s*["']?{re.escape(key)}["']?\s*:""", content)
        ),
        None,
    )
    close = difflib.get_close_matches(key.replace("-", "_"), sorted(known), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return DataError(path, f"unknown key {key!r}{hint}", line=line, field=key)


def merge_job_file(args: EstimateArgs, job: dict[str, Any]) -> EstimateArgs:
    """Job-file values fill what the flags left unset (flags win)."""
    for name, value in job.items():
        current = getattr(args, name)
        if current in (None, [], False):
            if isinstance(current, list):
                value = [str(v) for v in value] if isinstance(value, list) else [str(value)]
            elif isinstance(current, bool) or name in ("fsdp", "reuse_commitment"):
                value = bool(value)
            else:
                value = str(value)
            setattr(args, name, value)
    return args
