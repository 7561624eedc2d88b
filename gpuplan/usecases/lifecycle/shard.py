"""Which shard this run is, and the part of the fleet it owns.

The shard comes from ``--shard INDEX/COUNT``, else from a Kubernetes Indexed Job:
``JOB_COMPLETION_INDEX`` (set by Kubernetes in each pod) with the count from
``--shards COUNT`` or ``GPUPLAN_SHARDS`` (the Job's ``completions``; Kubernetes does not
tell a pod). No flag and no index: one run over the whole fleet. An index without a
count, a count without an index, or an index outside the count is bad input (exit 2)
before anything is surveyed: a pod that guessed would survey the wrong scopes.

:func:`shard_fleet` keeps the adapters whose scope the shard owns
(:func:`gpuplan.core.lifecycle.shard.shard_of`); every shard keeps the fleet's problems (a scope
that could not be built has no adapter to hash, so each shard reports it).
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuplan.core.errors import InputError
from gpuplan.core.lifecycle.shard import Shard, parse_count, parse_shard
from gpuplan.usecases.clouds.adapters import Adapters

INDEX_ENV = "JOB_COMPLETION_INDEX"
SHARDS_ENV = "GPUPLAN_SHARDS"


def resolve_shard(flag: str | None, count: int | None, environ: Mapping[str, str]) -> Shard | None:
    """The shard named by the flags or the Indexed Job's environment; None: no sharding."""
    if flag:
        shard = parse_shard(flag)
        if count is not None and count != shard.count:
            raise InputError(f"--shard {flag} disagrees with --shards {count}")
        return shard
    env_count = environ.get(SHARDS_ENV, "").strip()
    if count is None and env_count:
        count = parse_count(env_count, SHARDS_ENV)
    index = environ.get(INDEX_ENV, "").strip()
    if count is None and not index:
        return None
    if count is None:
        raise InputError(
            f"{INDEX_ENV}={index[:20]} is set (a Kubernetes Indexed Job) but the shard count "
            f"is not: set {SHARDS_ENV} (or --shards) to the Job's completions"
        )
    if not index:
        raise InputError(
            f"a shard count ({count}) needs {INDEX_ENV} (a Kubernetes Indexed Job) or "
            "--shard INDEX/COUNT"
        )
    if not index.isascii() or not index.isdigit() or len(index) > 6:
        raise InputError(f"{INDEX_ENV}: expected a whole number, got {index[:20]!r}")
    return Shard(int(index), count)


def shard_fleet(fleet: Adapters, shard: Shard | None) -> Adapters:
    """The adapters of ``fleet`` whose scope ``shard`` owns (all of them without one)."""
    if shard is None:
        return fleet
    mine = [adapter for adapter in fleet.adapters if shard.owns(adapter.scope)]
    return Adapters(mine, list(fleet.problems))


def shard_notice(fleet: Adapters, mine: Adapters, shard: Shard | None) -> str | None:
    """``shard 1/4: 3 of 11 scopes (aws us-east-1, ...)``, for stderr; None unsharded."""
    if shard is None:
        return None
    names = ", ".join(a.scope for a in mine.adapters[:5])
    more = f", +{len(mine.adapters) - 5} more" if len(mine.adapters) > 5 else ""
    listing = f" ({names}{more})" if names else ""
    return f"shard {shard.label}: {len(mine.adapters)} of {len(fleet.adapters)} scopes{listing}"
