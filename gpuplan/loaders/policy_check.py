"""``gpuplan policy check`` on one file: every problem at once, and warnings.

The loader (:func:`gpuplan.loaders.policy_file.collect_problems`) finds every error of a
file in one pass; this adds what only ``policy check`` asks of a valid policy: the
data-loss decision written down, and one warning line per dangerous setting
(:mod:`gpuplan.core.policy.danger`), each at its line in the file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from gpuplan.core.catalog.gpus import GpuTable
from gpuplan.core.errors import DataError, InputError
from gpuplan.core.policy import Policy
from gpuplan.core.policy.danger import dangerous_settings, data_loss_unstated
from gpuplan.core.urls import Split
from gpuplan.loaders.policy_file import MAX_BYTES, PolicyFileError, collect_problems, place
from gpuplan.loaders.safe_read import read_bytes


@dataclass(frozen=True)
class PolicyCheck:
    """``gpuplan policy check`` on one file: every error at once, and warnings."""

    policy: Policy | None
    problems: tuple[DataError | InputError, ...]
    warnings: tuple[str, ...]

    @property
    def errors(self) -> tuple[str, ...]:
        """One line per problem, as ``policy check`` prints them."""
        return tuple(str(p) for p in self.problems)


def check_policy_file(
    path: str | os.PathLike[str],
    *,
    split: Split,
    gpus: GpuTable | None = None,
    environ: Mapping[str, str] | None = None,
) -> PolicyCheck:
    """Every problem of the file (not the first three), the policy when it has none, and
    warnings on dangerous settings (:mod:`gpuplan.core.policy.danger`). ``split`` is the
    parser that fetches the policy's URLs (:func:`gpuplan.providers.url_parts.split_url`)."""
    shown = str(path)
    try:
        data = read_bytes(path, limit=MAX_BYTES, what="policy file")
        parsed = collect_problems(data, shown, split=split, gpus=gpus, environ=environ)
    except PolicyFileError as exc:
        return PolicyCheck(None, tuple(exc.problems), ())
    except InputError as exc:
        return PolicyCheck(None, (exc,), ())
    placed = sorted(parsed.problems, key=lambda p: (p.line or 0, p.column or 0))
    problems: list[DataError | InputError] = list(placed)
    policy = parsed.policy
    warnings: tuple[str, ...] = ()
    if policy is not None:
        unstated = data_loss_unstated(policy)
        if unstated is not None:
            problems.append(place(unstated.path, unstated.message, parsed.marks, shown, key=True))
            policy = None
        else:
            found = dangerous_settings(policy)
            warnings = tuple(str(place(p.path, p.message, parsed.marks, shown)) for p in found)
    return PolicyCheck(policy, tuple(problems), warnings)
