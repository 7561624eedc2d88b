"""Property: for any document at all, the checker answers a policy or a clean, placed error."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplan.core.errors import InputError
from gpuplan.core.policy import Policy
from gpuplan.loaders.policy_errors import known_keys
from gpuplan.loaders.policy_file import parse_policy
from gpuplan.providers.url_parts import split_url
from gpuplan.usecases.policy import gpu_table

PATH = "random.yaml"
GPUS = gpu_table()

KEYS = sorted(
    {
        *known_keys(()),
        *known_keys(("scope",)),
        *known_keys(("scope", "aws")),
        *known_keys(("budget",)),
        *known_keys(("planning",)),
        *known_keys(("idle",)),
        *known_keys(("idle", "metrics")),
        *known_keys(("notify",)),
        "regions",
        "projects",
        "subscriptions",
        "team",
        "Team",
        "x:y",
        "",
    }
)
WORDS = st.sampled_from(
    [
        "2h",
        "90m",
        "1h30m",
        "-5m",
        "stop",
        "suspend",
        "notify",
        "H100",
        "A100",
        "spot",
        "us-east-1",
        "${HOME}",
        "${NOT_SET_ANYWHERE_X}",
        "${}",
        "http://x",
        "yes",
        "gpuplan-keep",
        "00000000-0000-0000-0000-000000000000",
        "1e400",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    WORDS,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=5),
    ),
    max_leaves=12,
)
SECTIONS = st.fixed_dictionaries(
    {"version": st.one_of(st.just(1), SCALARS), "name": st.one_of(st.just("team"), SCALARS)},
    optional={k: VALUES for k in ("scope", "budget", "planning", "idle", "notify", "extra")},
)


def check(data: bytes | str) -> None:
    try:
        policy = parse_policy(
            data, PATH, split=split_url, gpus=GPUS, environ={"HOME": "http://127.0.0.1/h"}
        )
    except InputError as exc:
        lines = str(exc).splitlines()
        assert 1 <= len(lines) <= 4
        assert all(line.startswith(f"{PATH}") or line.startswith("(and ") for line in lines)
        return
    assert isinstance(policy, Policy)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SECTIONS)
def test_policy_shaped_documents(doc: dict[str, Any]) -> None:
    check(yaml.safe_dump(doc, sort_keys=False))


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_any_yaml_document(doc: Any) -> None:
    check(yaml.safe_dump(doc))


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200)))
def test_any_text_or_bytes(data: str | bytes) -> None:
    check(data)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=" \t\n:-[]{}#&*!|>'\"%@`,?ab1", max_size=80))
def test_yaml_punctuation_soup(data: str) -> None:
    check("version: 1\nname: t\n" + data)
