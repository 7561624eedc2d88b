"""What the documentation claims about each of its shell examples: the one place to
update when an output changes on purpose.

A command found in README.md or docs/getting-started.md (``examples.py``) is run by
``test_examples.py`` and checked against its entry in ``CLAIMS``, keyed by the command's
text as written (continuation lines joined, trailing comment off); a command without an
entry must exit 0 and reach no host but loopback. So a new example is tested as soon as
it is written, and only needs an entry here when the prose says more than "it works".

``changing``: the output contradicts the prose today and another change is fixing it;
the claim states what the prose says, and the test is an expected failure (strict: once
the fix lands the test passes, fails as XPASS, and the ``changing`` line comes out).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from tests.docs.stand_ins import MOVED, azure_retail_prices, skypilot_catalogs


@dataclass(frozen=True)
class Claim:
    exit: int = 0
    shows: tuple[str, ...] = ()
    """Regular expressions (multi-line) that must each match stdout + stderr."""
    json: bool = False
    """stdout is one JSON document."""
    refused: tuple[str, ...] = ()
    """Hosts beyond loopback it is expected to try (the test's guard refuses them)."""
    changing: str | None = None
    """Why today's output contradicts the prose, and what is fixing it."""


NOT_RUN: dict[str, str] = {
    # Set-up: .ci/run runs the README's two set-up blocks verbatim on a clean clone (a
    # test cannot: they install the package and the second one runs this suite).
    "python3 -m venv .venv && . .venv/bin/activate && pip install . && "
    "gpuplan estimate --params 7B --tokens 1T": "set-up; run verbatim by .ci/run",
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]' && pytest": (
        "set-up; run verbatim by .ci/run (it is this test suite)"
    ),
    "python3 -m venv .venv": "set-up; .ci/run runs the README's equivalent",
    ". .venv/bin/activate": "set-up; the tests run this venv's gpuplan",
    "pip install .": "set-up; .ci/run runs the README's equivalent",
    # Every provider's price API with real credentials (AWS, GCP); each refresh is tested
    # on its wire fake in tests/providers/pricing/, and the Azure one here below.
    "gpuplan catalog refresh": "needs AWS and GCP credentials; tests/providers/pricing/",
    # Each cloud's cost API with real credentials; tested on moto's Cost Explorer and the
    # BigQuery and Cost Management wire fakes in tests/usecases/bill/.
    "gpuplan bill sync --policy policies/research-spot.yaml": (
        "needs cost API credentials; tests/usecases/bill/"
    ),
}

DOC_ENV: dict[str, dict[str, str]] = {
    # The README's lifecycle examples (budget, fleet, stop-idle, snooze) read the clouds:
    # the getting-started demo fleet (the in-memory fake) stands in for them.
    "README.md": {"GPUPLAN_FAKE_FLEET": "docs/examples/demo-fleet.json"},
    "docs/getting-started.md": {},
}

SESSIONS: dict[str, str] = {"README.md": "block", "docs/getting-started.md": "file"}
"""How commands share a shell: the README's blocks are independent examples (one shell
and fresh HOME each); getting-started is one walk-through (one shell, in order)."""

StandIn = Callable[[Path], AbstractContextManager[dict[str, str]]]
STAND_INS: dict[str, StandIn] = {
    "gpuplan catalog refresh --provider azure --dry-run": azure_retail_prices,
    "gpuplan catalog import --format skypilot ~/.sky/catalogs/v8": skypilot_catalogs,
}

_DEMO = "docs/examples/demo-policy.yaml"
_RESEARCH = "policies/research-spot.yaml"
_ESTIMATE_TABLE = r"^ ?1  \S+ x \d+ "
"""Option 1's row of an estimate table."""

CLAIMS: dict[str, Claim] = {
    "gpuplan --help": Claim(shows=(r"estimate +rank GPU options", r"stop-idle")),
    # --- prices
    "gpuplan gpus --prices --gpu H100 --per-cloud": Claim(
        # "on-demand and spot, on each cloud (per GPU-hour, and where)"
        shows=(r"^H100 +aws ", r"^H100 +azure ", r"^H100 +gcp ", r"spot \$/GPU-h"),
    ),
    "gpuplan catalog --gpu A100-80GB --gpus 8 --region europe --sort price --top 1": Claim(
        # "Cheapest 8xA100-80GB in Europe": one row, 8 GPUs, a European region
        shows=(
            r"^1 offer \(top 1 of \d+\)",
            r"^\w+ +\S+ +(eu|europe|north|west|sweden|"
            r"france|germany|uk|switzerland|italy|poland|norway|spain)\S* +8x A100-80GB",
        ),
    ),
    "gpuplan gpus --prices": Claim(shows=(r"cheapest on-demand at", r"cheapest spot at")),
    "gpuplan catalog --gpu H100 --pricing spot --sort price-per-gpu": Claim(
        shows=(r"\$/GPU-h at spot", r"H100"),
    ),
    "gpuplan catalog --gpu A100-80GB --region us-east-1,eastus --json": Claim(json=True),
    "gpuplan catalog --min-gpus 8 --max-hourly 40 --sort tflops-per-dollar --top 10": Claim(
        shows=(r"^10 offers \(top 10 of \d+\)",),
    ),
    "gpuplan gpus": Claim(shows=(r"TFLOP/s",)),
    "gpuplan catalog refresh --provider azure --dry-run": Claim(
        # "diff only: price moves, new and vanished types" (the fake moved one price)
        shows=(MOVED,),
    ),
    "gpuplan catalog import --format skypilot ~/.sky/catalogs/v8": Claim(
        # The stand-in holds the few rows of tests/loaders/data/skypilot, so the import
        # reads them and then refuses to drop >20% of each provider's offers (the
        # documented gate): exit 1, nothing written. A full SkyPilot catalog would pass.
        exit=1,
        shows=(r"^aws: \d+ regions? updated", r"would vanish; previous data kept"),
    ),
    "gpuplan catalog --source": Claim(shows=(r"bundled",)),
    # --- planning
    "gpuplan estimate --params 7B --tokens 1T": Claim(
        shows=(_ESTIMATE_TABLE, r"[\d,]+ feasible options", r"P \* = Pareto frontier"),
    ),
    "gpuplan estimate --params 70B --tokens 2T --gpu H100 --gpus 64-1024 --deadline 30d "
    "--budget 5e6": Claim(
        # getting-started: "Add a deadline and a budget to see what is feasible".
        shows=(_ESTIMATE_TABLE, r"H100 x 1024 .* 2\d\.\d d "),
    ),
    "gpuplan estimate --params 671B --active-params 37B --tokens 14.8T --gpu H800 --gpus 2048 "
    "--precision fp8 --layers 61 --hidden 7168 --heads 128 --experts 256 --top-k 8": Claim(
        # DeepSeek-V3: the row only; how close its GPU-hours come to the published
        # 2.788M is the accuracy table's business (tests/core/planner/).
        shows=(r"^ ?1  H800 x 2048 ",),
    ),
    "gpuplan estimate --params 7B --tokens 5B --gpu A10G --gpus 1 --show-infeasible": Claim(
        # "what would fit": nothing fits one A10G (exit 1, the README's meaning), and
        # the output lists why and what would (5B tokens: 8 x A10G finish inside the
        # 90-day default; at 20B no change checked would).
        exit=1,
        shows=(
            r"^Left out:",
            r"memory: 1 x A10G needs",
            r"^what would fit:",
            r"more GPUs: at least 8 x A10G",
        ),
    ),
    "gpuplan estimate --params 7B --tokens 1T --explain": Claim(
        # "the arithmetic of option 1": FLOPs 6ND, MFU, memory, dollars
        shows=(_ESTIMATE_TABLE, r"6ND", r"MFU"),
    ),
    "gpuplan estimate --params 7B --tokens 1T --policy policies/research-spot.yaml": Claim(
        # The policy allows H100/A100-80GB/L4, on-demand or spot, $80,000 a month.
        # A month of the job (not all of it) is set against the monthly budget.
        shows=(_ESTIMATE_TABLE, r"feasible options?"),
    ),
    "gpuplan estimate --throughput 3100 --measured-on A100-80GB --tokens 1T --params 7B": (
        Claim(shows=(_ESTIMATE_TABLE,))
    ),
    # --- policies
    "gpuplan policy check policies/*.yaml": Claim(
        shows=(
            r"research-spot\.yaml: ok",
            r"deadline-reserved\.yaml: ok",
            r"notify-only\.yaml: ok",
        ),
    ),
    "gpuplan policy show policies/research-spot.yaml": Claim(
        shows=(r"^name: research-team", r"monthly_usd: 80000"),
    ),
    f"gpuplan budget --policy {_RESEARCH}": Claim(
        # "month-to-date estimate, forecast, alerts"
        shows=(r"month to date +\$[\d,.]+ of \$80,000\.00", r"forecast month"),
    ),
    # --- idle GPUs, README (on the demo fleet)
    f"gpuplan fleet --policy {_RESEARCH}": Claim(
        shows=(r"i-0train .* busy ", r"i-0idle .* idle ", r"i-0keep .* exempt "),
    ),
    f"gpuplan stop-idle --policy {_RESEARCH}": Claim(
        shows=(r"dry run: nothing was changed", r"planned: 1 stop"),
    ),
    f"gpuplan stop-idle --policy {_RESEARCH} --apply": Claim(
        # "act on what is still idle": i-0idle is stopped; the policy's Slack webhook
        # is refused by the test's guard, so the run reports it and exits 1.
        exit=1,
        shows=(r"i-0idle .* stop +stopped ", r"done: 1 stopped", r"webhook not delivered"),
        refused=("hooks.slack.com",),
    ),
    f"gpuplan snooze i-0abc123 --for 4h --policy {_RESEARCH}": Claim(
        # i-0abc123 is the README's placeholder id; no such instance in the demo fleet.
        exit=2,
        shows=(r"i-0abc123: not a GPU instance in the policy's scope",),
    ),
    "gpuplan history": Claim(shows=(r"apply +failed ", r"dry run +ok ")),
    "gpuplan savings --by label:team": Claim(shows=(r"^research ", r"^total ")),
    "gpuplan waste --since 7d --by label:team": Claim(shows=(r"^research +[\d.]+ ",)),
    # --- getting-started, section 5: the demo fleet
    f"gpuplan fleet --policy {_DEMO}": Claim(
        # "i-0train busy (87% is above the policy's 5% threshold), i-0idle idle ...,
        # i-0keep exempt because it carries the gpuplan-keep tag"
        shows=(
            r"i-0train .* 87\.0 .* busy .*threshold 5%",
            r"i-0idle .* idle .*for 60 min",
            r"coverage 100%",  # the reason column wraps: its own line may hold this
            r"i-0keep .* exempt .*gpuplan-keep",
        ),
    ),
    f"gpuplan stop-idle --policy {_DEMO}": Claim(
        # "i-0idle idle with the planned action stop ... Nothing is changed without --apply"
        shows=(r"i-0idle .* idle +stop +none ", r"dry run: nothing was changed"),
    ),
    f"gpuplan stop-idle --policy {_DEMO} --apply": Claim(
        # "the stop happens, the webhook fails, the command exits 1"
        exit=1,
        shows=(r"i-0idle .* stop +stopped ", r"webhook not delivered: \*\*\*"),
        # the webhook URL is a secret (Slack's carry their token): shown redacted
    ),
}
"""Keyed by command text. ``gpuplan history`` appears in both files with the same claim:
after a dry run and a failed applied run."""
