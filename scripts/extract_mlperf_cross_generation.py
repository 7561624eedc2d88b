"""Build the MLPerf rows of tests/core/planner/anchors/cross_generation_external.csv.

Run: python scripts/extract_mlperf_cross_generation.py --mirror DIR [--out FILE]
[--every-submission]

DIR holds git snapshots of the MLCommons results repositories, one per round, as
``DIR/mlcommons+training_results_vX.Y/repo`` (bare git directories: the script reads them
with ``git ls-tree`` / ``git show`` at HEAD and records that commit). Nothing here touches
the network or gpuplan; the scoring is scripts/bench_cross_generation_external.py.

What it does, decided before any scoring (the planner is never consulted):

- every closed-division result of the LLM benchmarks (llama2_70b_lora, llama31_8b,
  llama31_405b, gpt3) and of the small transformer among them, BERT-large (bert, 340M),
  in rounds v4.0-v5.1; per run the minutes from ``run_start`` to
  ``run_stop`` (status success) and the samples trained (``samples_count`` at
  ``run_stop`` or the last ``eval_accuracy``; gpt3 logs ``trained_samples``, in tokens;
  bert only ``train_samples``, in sequences of 512);
  the score is MLPerf's olympic mean (drop the fastest and slowest run);
- a system's logs republished unchanged in a later round (same run times) stay with the
  round they first appeared in;
- per (round, benchmark, GPU count, GPU model) the fastest submission represents the GPU
  (what a "GPU A vs GPU B in MLPerf" comparison quotes), whoever submitted it;
- pairs: the generation steps in ``STEPS`` found in one round at one GPU count; per
  (benchmark, GPU pair, count) only the newest round; per (round, benchmark, GPU pair) the
  smallest and the largest count;
- the precision of each side from its own files (``precision_of``): a config dump in the
  log, else the config file the system's README or name points to, else every config of
  that submitter for that benchmark when they all agree, else ``OVERRIDES`` (read by hand,
  each with its evidence).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROUNDS = ("4.0", "4.1", "5.0", "5.1")
BENCHMARKS = ("llama2_70b_lora", "llama31_8b", "llama31_405b", "gpt3", "bert")
RESULT = re.compile(r"^([^/]+)/results/([^/]+)/(" + "|".join(BENCHMARKS) + r")/result_[^/]+\.txt$")
GPU_NAMES = (
    ("H200-NVL", "H200-NVL"),
    ("H100-PCIe", "H100-PCIe"),
    ("H100", "H100"),
    ("H200", "H200"),
    ("GB300", "GB300"),
    ("B300", "B300"),
    ("GB200", "GB200"),
    ("B200", "B200"),
    ("A100-SXM4-80GB", "A100-80GB"),
    ("A100-SXM-80GB", "A100-80GB"),
    ("MI300X", "MI300X"),
    ("MI325X", "MI325X"),
    ("MI355X", "MI355X"),
)
"""System-description accelerator names -> gpuplan names (first match wins). H200 NVL
and H100 PCIe (ASUSTeK's v4.0 BERT system, 2.1x slower than the SXM parts), L40S,
MI350X, Gaudi and TPUs are not in any step below."""
STEPS = (
    ("A100-80GB", "H100"),
    ("H100", "H200"),
    ("H100", "B200"),
    ("H200", "B200"),
    ("H100", "GB200"),
    ("H200", "GB200"),
    ("B200", "B300"),
    ("GB200", "GB300"),
    ("MI300X", "MI325X"),
    ("MI325X", "MI355X"),
    ("MI300X", "MI355X"),
    ("H100", "MI300X"),
    ("H200", "MI300X"),
    ("H200", "MI325X"),
    ("B200", "MI355X"),
)
"""Generation steps compared (older or NVIDIA side first): each vendor's successive parts
(and Hopper -> Blackwell both as HGX B200 and as GB200 NVL72), and the contemporaries
across vendors. Same-die form factors (B200 vs GB200, B300 vs GB300) are not a generation
step and are left out."""
MODELS = {
    "llama2_70b_lora": ("Llama 2 70B LoRA fine-tuning", "70B", 8192, "lora"),
    "llama31_8b": ("Llama 3.1 8B pretraining", "8B", 8192, "pretrain"),
    "llama31_405b": ("Llama 3.1 405B pretraining", "405B", 8192, "pretrain"),
    "gpt3": ("GPT-3 175B pretraining", "175B", 2048, "pretrain"),
    "bert": ("BERT-large pretraining", "340M", 512, "pretrain"),
}
"""benchmark -> (model, parameters, sequence length, method) per the MLPerf Training
rules (llama2_70b_lora: LoRA on Llama 2 70B, GovReport packed to 8,192 tokens;
llama31_*: C4 at 8,192; gpt3: C4 at 2,048; bert: BERT-large, 340M parameters, Wikipedia
at 512 tokens)."""

OVERRIDES: dict[tuple[str, str, str, str], tuple[str, str]] = {
    ("5.1", "University-of-Florida", "hpg.dgxb200x8.n8", "llama2_70b_lora"): (
        "fp8",
        "University-of-Florida/benchmarks/llama2_70b_lora/implementations/hpg.dgxb200x8/"
        "config_DGXB200_8x8x1xtp1pp1cp8.sh: source $(dirname ${BASH_SOURCE[0]})/"
        "config_common.sh (no fp4 file); b200_nemo/config_common.sh: export FP8=True",
    ),
    ("5.1", "University-of-Florida", "hpg.dgxb200x8.n16", "llama2_70b_lora"): (
        "fp8",
        "University-of-Florida/benchmarks/llama2_70b_lora/implementations/hpg.dgxb200x8/"
        "config_DGXB200_16x8x1xtp1pp1cp8.sh: source $(dirname ${BASH_SOURCE[0]})/"
        "config_common.sh (no fp4 file); b200_nemo/config_common.sh: export FP8=True",
    ),
    ("5.1", "University-of-Florida", "hpg.dgxb200x8.n8", "llama31_8b"): (
        "fp8",
        "University-of-Florida/benchmarks/llama31_8b/implementations/hpg.dgxb200x8/"
        "config_DGXB200_8x8x1xtp1pp1cp2_8b.sh sources config_common.sh, config_common_8b.sh, "
        "config_common_cg.sh (no fp4 file); b200_nemo/config_common.sh: export FP8=True",
    ),
    ("5.1", "University-of-Florida", "hpg.dgxb200x8.n16", "llama31_8b"): (
        "fp8",
        "University-of-Florida/benchmarks/llama31_8b/implementations/hpg.dgxb200x8/"
        "config_DGXB200_16x8x1xtp1pp1cp2_8b.sh sources config_common.sh, config_common_8b.sh, "
        "config_common_cg.sh (no fp4 file); b200_nemo/config_common.sh: export FP8=True",
    ),
    ("5.1", "AMD", "MI355X_EPYC_9575F_pytorch", "llama31_8b"): (
        "fp8",
        "AMD/benchmarks/llama31_8b/implementations/MI355X_EPYC_9575F_pytorch_llama3_8b/"
        'src/train.py: model_config.fp8 = "hybrid" (config_MI355X_1x8x1_8b.sh: export '
        "FP8_PARAMS=1)",
    ),
    ("4.0", "JuniperNetworks", "a100_n8_ngc24.1_pytorch_deepspeed", "llama2_70b_lora"): (
        "bf16",
        "JuniperNetworks/benchmarks/llama2_70b_lora/implementations/pytorch/configs/"
        'ds_lora_config.json: "bf16": { "enabled": true } (DeepSpeed ZeRO stage 3)',
    ),
}
"""Sides whose precision no rule below settles, read by hand."""


EXCLUDED: dict[tuple[str, str, int, str, str], str] = {
    ("4.0", "llama2_70b_lora", 64, "A100-80GB", "H100"): (
        "different implementations, not hardware: the round's only A100 result is "
        "JuniperNetworks' DeepSpeed ZeRO-3 bf16 port; the same submitter's DeepSpeed run on "
        "8 H100 took 116.1 min against 28.0 min for NVIDIA's NeMo fp8 run on 8 H100 "
        "(JuniperNetworks/results/h100_n1_ngc24.1_pytorch_deepspeed vs "
        "NVIDIA/results/eos_ngc24.04_nemo, same round)"
    ),
    ("5.0", "bert", 8, "H200", "MI300X"): (
        "different implementations, not hardware: the round's only MI300X BERT result is "
        'tinycorp\'s tinygrad port (tinycorp/systems/tinybox_8xMI300X.json: "framework": '
        '"tinygrad, branch mlperf_training_v5.0"; PCIe host interconnect), 23x slower than '
        "the PyTorch H200 result it is paired with"
    ),
}
"""Pairs kept in the table but out of the headline, each with the reason (read off the
results, before scoring)."""

NVIDIA_V41 = (
    "Highlights include per-GPU performance boosts of 2x for GPT-3 pre-training and 2.2x "
    "for Llama 2 70B low-rank adaptation (LoRA) fine-tuning.",
    "https://pglfmc.com/latest_news/nvidia-blackwell-doubles-llm-training-performance-in-"
    "mlperf-training-v4-1-us-pioneer-global-vc-difchq-sfo-india-singapore-riyadh-swiss-our-"
    "mind (copy of NVIDIA's technical blog \"NVIDIA Blackwell Doubles LLM Training "
    'Performance in MLPerf Training v4.1"); also https://the-decoder.com/?p=18876: "it '
    "possible to run the GPT-3 175B benchmark with only 64 GPUs. For the same benchmark "
    'with Hopper, 256 GPUs would still have been needed"',
)
STATEMENTS: dict[tuple[str, str, int, str, str], tuple[str, str]] = {
    ("4.1", "llama2_70b_lora", 8, "H100", "B200"): NVIDIA_V41,
    ("5.0", "llama31_405b", 512, "H100", "GB200"): (
        "These improvements allowed the NVIDIA GB200 NVL72 system to train the Llama 3.1 "
        "405B model 2.2x faster than the Hopper system when using 512 GPUs.",
        "https://hyper.ai/en/stories/1432ac3df528202c246c569f1983e131 (summary of NVIDIA's "
        "blog https://developer.nvidia.com/blog/nvidia-blackwell-delivers-up-to-2-6x-higher-"
        "performance-in-mlperf-training-v5-0/)",
    ),
}
"""Vendor statements that describe a pair of the table: shown beside the log figures."""

EXTRA_PAIRS = (
    (
        "mlperf-log-per-gpu",
        ("4.1", "NVIDIA", "eos_n32_ngc24.09_nemo"),
        ("4.1", "NVIDIA", "b200_n8_preview_nemo"),
        "gpt3",
        "NVIDIA compares GPT-3 per GPU between 256 H100 and 64 B200 (the smallest counts "
        "each ran in v4.1); measured = GPU-minutes A / GPU-minutes B.",
        f"{NVIDIA_V41[0]} [{NVIDIA_V41[1]}]",
    ),
    (
        "mlperf-log-cross-round",
        ("4.1", "NVIDIA", "eos_ngc24.09_nemo"),
        ("5.0", "NVIDIA", "nyx_n1_ngc25.04_nemo"),
        "llama2_70b_lora",
        "NVIDIA's v5.0 DGX B200 (nyx) result against its previous (v4.1) DGX H100 (eos) "
        "result, 8 GPUs each.",
        "Similarly, the NVIDIA DGX B200 systems, equipped with eight Blackwell GPUs, "
        "delivered 2.5x more performance on the Llama 2 70B LoRA fine-tuning benchmark "
        "[https://blockchainnews.azurewebsites.net/news/nvidia-blackwell-architecture-mlperf-"
        'training]; "Blackwell GPUs achieved a 2.5x speedup compared to previous submissions '
        'using the DGX H100 system" [https://cashkrypto.com/?p=53842]',
    ),
)
"""Pairs a vendor states across GPU counts or rounds: (kind, side A, side B, benchmark,
what is compared, the statement with its address). Scored, and reported apart from the same-round,
same-count headline."""

STATED = (
    {
        "source_id": "mosaicml-h100-2023",
        "kind": "stated",
        "benchmark": "MosaicML Composer + Transformer Engine on one CoreWeave HGX H100 node",
        "model": "GPT 7B (MPT-style) pretraining",
        "params": "7B",
        "active_params": "",
        "experts": "",
        "top_k": "",
        "seq_len": "2048",
        "method": "pretrain",
        "gpu_a": "A100-80GB",
        "gpu_b": "H100",
        "gpus_a": "8",
        "gpus_b": "8",
        "precision_a": "bf16",
        "precision_b": "fp8",
        "metric": "training speed ratio as stated (3x); GPU counts: one HGX H100 node (8), "
        "the A100 count and variant (40 or 80 GB) not stated: scored as 8 x A100-80GB; "
        "sequence length not stated: 2048 assumed (MPT-7B)",
        "value_a": "",
        "value_b": "",
        "tokens_a": "",
        "tokens_b": "",
        "measured_speedup": "3.0",
        "excluded": "",
        "quote_a": "",
        "quote_b": "",
        "statement": "Right out of the box, training a 7B GPT model with NVIDIA H100 using "
        "FP8 precision was 3x faster than the current standard of NVIDIA A100 using BF16 "
        "precision. Further optimizations can boost this even more. [...] For this sneak peek "
        "at the H100, the CoreWeave team gave us access to one of their NVIDIA HGX H100 "
        "cloud instances",
        "source": "https://databricks.com/blog/coreweave-nvidia-h100-part-1 (also "
        "https://www.mosaicml.com/blog/coreweave-nvidia-h100-part-1)",
    },
)
"""Ratios stated in prose with no per-side logs."""


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, errors="replace"
    )
    return done.stdout


@dataclass
class Submission:
    round: str
    commit: str
    repo: Path
    submitter: str
    system: str
    benchmark: str
    accelerator: str
    gpus: int
    files: list[str] = field(default_factory=list)
    minutes: list[float] = field(default_factory=list)
    samples: list[float] = field(default_factory=list)
    global_batch: int | None = None

    @property
    def gpu(self) -> str | None:
        for key, name in GPU_NAMES:
            if key in self.accelerator:
                return name
        return None

    def kept(self) -> list[int]:
        """Indices of the runs MLPerf's olympic mean keeps (all but fastest, slowest)."""
        order = sorted(range(len(self.minutes)), key=self.minutes.__getitem__)
        return order[1:-1] if len(order) > 2 else order

    @property
    def score(self) -> float:
        return statistics.mean(self.minutes[i] for i in self.kept())

    @property
    def mean_samples(self) -> float | None:
        values = [self.samples[i] for i in self.kept()]
        return statistics.mean(values) if all(v > 0 for v in values) else None


def parse_log(text: str) -> tuple[float, float, int | None] | None:
    start = stop = None
    ok = False
    samples = fallback = 0.0
    batch = None
    for line in text.splitlines():
        at = line.find(":::MLLOG ")
        if at < 0:
            continue
        try:
            entry = json.loads(line[at + 9 :])
        except json.JSONDecodeError:
            continue
        key, meta = entry.get("key"), entry.get("metadata") or {}
        if key == "run_start":
            start = entry["time_ms"]
        elif key == "run_stop":
            stop = entry["time_ms"]
            ok = meta.get("status") == "success"
            samples = float(meta.get("samples_count") or samples)
        elif key == "eval_accuracy" and meta.get("samples_count"):
            samples = float(meta["samples_count"])
        elif key == "trained_samples":
            samples = float(entry["value"])
        elif key == "train_samples":
            fallback = float(entry["value"])
        elif key == "global_batch_size":
            batch = int(entry["value"])
    if start is None or stop is None or not ok:
        return None
    return (stop - start) / 60000.0, samples or fallback, batch


def load_round(mirror: Path, version: str) -> list[Submission]:
    repo = mirror / f"mlcommons+training_results_v{version}" / "repo"
    commit = git(repo, "rev-parse", "HEAD").strip()
    groups: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for path in git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines():
        if match := RESULT.match(path):
            groups[(match[1], match[2], match[3])].append(path)
    out = []
    for (submitter, system, benchmark), files in sorted(groups.items()):
        try:
            desc = json.loads(git(repo, "show", f"HEAD:{submitter}/systems/{system}.json"))
        except json.JSONDecodeError:
            continue
        if desc.get("division") != "closed":
            continue
        gpus = int(desc["number_of_nodes"]) * int(desc["accelerators_per_node"])
        sub = Submission(
            version,
            commit,
            repo,
            submitter,
            system,
            benchmark,
            desc["accelerator_model_name"],
            gpus,
            sorted(files),
        )
        for path in sub.files:
            parsed = parse_log(git(repo, "show", f"HEAD:{path}"))
            if parsed:
                sub.minutes.append(parsed[0])
                sub.samples.append(parsed[1])
                sub.global_batch = parsed[2] or sub.global_batch
        if sub.minutes and sub.gpu:
            out.append(sub)
    return out


DUMP_FP4 = re.compile(r"\bfp4: true\b")
DUMP_FP8 = re.compile(r"\bfp8: true\b|\bfp8='hybrid'")


def bench_tree(sub: Submission) -> list[str]:
    """Every file of the submitter's implementation of the benchmark."""
    where = f"{sub.submitter}/benchmarks/{sub.benchmark}"
    return git(sub.repo, "ls-tree", "-r", "--name-only", "HEAD", where).splitlines()


def _config_text(sub: Submission, name: str, seen: set[str]) -> str:
    """A config file and every file it sources, from the submitter's benchmark tree."""
    tree = bench_tree(sub)
    tree += git(
        sub.repo, "ls-tree", "-r", "--name-only", "HEAD", f"{sub.submitter}/results/{sub.system}"
    ).splitlines()
    paths = [p for p in tree if p.endswith("/" + name)]
    if not paths or name in seen:
        return ""
    seen.add(name)
    text = git(sub.repo, "show", f"HEAD:{paths[0]}")
    for sourced in re.findall(r"^\s*(?:source|\.)\s+.*?([\w.\-]+\.sh)\s*$", text, re.M):
        text += "\n" + _config_text(sub, sourced, seen)
    return text


def _readme_config(sub: Submission) -> str | None:
    tree = bench_tree(sub)
    for path in tree:
        if re.search(rf"README-{re.escape(sub.system)}\.md$", path):
            named = re.search(r"config_[\w.\-]+\.sh", git(sub.repo, "show", f"HEAD:{path}"))
            if named:
                return named.group(0)
    own = [p for p in tree if re.search(rf"/config_{re.escape(sub.system)}\.sh$", p)]
    return own[0].rsplit("/", 1)[1] if own else None


def _classify(text: str) -> str | None:
    if re.search(r"^\s*export FP4=True|config_common_fp4\.sh", text, re.M):
        return "fp4"
    if re.search(r"^\s*export FP8=True", text, re.M):
        return "fp8"
    return None


def precision_of(sub: Submission) -> tuple[str, str]:
    """(precision, evidence) for one submission; see the module docstring for the order."""
    key = (sub.round, sub.submitter, sub.system, sub.benchmark)
    if key in OVERRIDES:
        return OVERRIDES[key]
    if sub.benchmark == "bert":
        return bert_precision(sub)
    log = git(sub.repo, "show", f"HEAD:{sub.files[0]}")
    if DUMP_FP4.search(log):
        return "fp4", f"{sub.files[0]}: config dump in the log: fp4: true"
    if DUMP_FP8.search(log):
        return "fp8", f"{sub.files[0]}: config dump in the log: fp8: true"
    name = _readme_config(sub)
    if name:
        found = _classify(_config_text(sub, name, set()))
        if found:
            shown = "FP4 (nvfp4)" if found == "fp4" else "export FP8=True"
            return found, f"{sub.submitter} {sub.benchmark} README/config {name}: {shown}"
    tree = bench_tree(sub)
    configs = [p for p in tree if re.search(r"/config[^/]*\.sh$", p)]
    kinds = {_classify(git(sub.repo, "show", f"HEAD:{p}")) for p in configs}
    fp8_false = any(
        re.search(r"^\s*export FP8=(False|0)", git(sub.repo, "show", f"HEAD:{p}"), re.M)
        for p in configs
    )
    if configs and "fp4" not in kinds and "fp8" in kinds and not fp8_false:
        return "fp8", (
            f"{sub.submitter}/benchmarks/{sub.benchmark}: every config file "
            f"({len(configs)}) sets or sources export FP8=True; none FP4"
        )
    return "unknown", "no config found"


HALF = re.compile(r"--fp16\b|DEFAULT_FLOAT=\"HALF\"")


def bert_precision(sub: Submission) -> tuple[str, str]:
    """BERT runs in half precision (fp16): the submitter's run script says so (``--fp16``
    or tinygrad's ``DEFAULT_FLOAT="HALF"``); a submitter without a run script is read from
    NVIDIA's implementation of the same round, which the others' trees copy."""
    for who in (sub.submitter, "NVIDIA"):
        where = f"{who}/benchmarks/bert"
        tree = git(sub.repo, "ls-tree", "-r", "--name-only", "HEAD", where).splitlines()
        for path in tree:
            if re.search(r"/(?:[\w-]*run_and_time[\w-]*|dev_run)\.sh$", path):
                found = HALF.search(git(sub.repo, "show", f"HEAD:{path}"))
                if found:
                    note = "" if who == sub.submitter else f" ({sub.submitter} has no run script)"
                    return "fp16", f"{path}: {found.group(0)}{note}"
    return "unknown", "no run script found"


def fresh_submissions(subs: list[Submission]) -> list[Submission]:
    """The submissions less the logs republished unchanged from an earlier round."""
    first_seen: dict[tuple[str, tuple[float, ...]], str] = {}
    fresh = []
    for sub in sorted(subs, key=lambda s: s.round):
        runs = (sub.benchmark, tuple(sorted(round(m, 4) for m in sub.minutes)))
        if runs in first_seen and first_seen[runs] != sub.round:
            continue  # republished logs of an earlier round
        first_seen[runs] = sub.round
        fresh.append(sub)
    return fresh


def every_pair(subs: list[Submission]) -> list[tuple[Submission, Submission]]:
    """Every submission against every other along ``STEPS`` in one round, benchmark and GPU
    count, whoever submitted them (``--every-submission``: a robustness check on the
    selection rules, not the headline table)."""
    fresh = fresh_submissions(subs)
    out = [
        (a, b)
        for a in fresh
        for b in fresh
        if (a.round, a.benchmark, a.gpus) == (b.round, b.benchmark, b.gpus)
        and (a.gpu, b.gpu) in STEPS
    ]
    return sorted(
        out, key=lambda ab: (ab[0].benchmark, ab[0].round, ab[0].gpu, ab[1].gpu, ab[0].gpus)
    )


def select_pairs(subs: list[Submission]) -> list[tuple[Submission, Submission]]:
    fresh = fresh_submissions(subs)
    best: dict[tuple[str, str, int, str], Submission] = {}
    for sub in fresh:
        assert sub.gpu is not None
        slot = (sub.round, sub.benchmark, sub.gpus, sub.gpu)
        if slot not in best or sub.score < best[slot].score:
            best[slot] = sub
    found: dict[tuple[str, str, str, int], tuple[Submission, Submission]] = {}
    for (rnd, bench, count, gpu_a), a in best.items():
        for step_a, step_b in STEPS:
            if gpu_a != step_a or (rnd, bench, count, step_b) not in best:
                continue
            b = best[(rnd, bench, count, step_b)]
            key = (bench, step_a, step_b, count)
            if key not in found or rnd > found[key][0].round:
                found[key] = (a, b)
    by_pair: dict[tuple[str, str, str, str], list[tuple[Submission, Submission]]] = defaultdict(
        list
    )
    for a, b in found.values():
        by_pair[(a.round, a.benchmark, a.gpu or "", b.gpu or "")].append((a, b))
    out: list[tuple[Submission, Submission]] = []
    for pairs in by_pair.values():
        pairs.sort(key=lambda ab: ab[0].gpus)
        out += [pairs[0]] + ([pairs[-1]] if len(pairs) > 1 else [])
    return sorted(
        out, key=lambda ab: (ab[0].benchmark, ab[0].round, ab[0].gpu, ab[1].gpu, ab[0].gpus)
    )


def side_quote(sub: Submission, precision: str, evidence: str) -> str:
    runs = ", ".join(f"{m:.2f}" for m in sub.minutes)
    return (
        f'{sub.submitter}/systems/{sub.system}.json: "accelerator_model_name": '
        f'"{sub.accelerator}", {sub.gpus} GPUs; precision {precision} ({evidence}); '
        f"minutes per run (run_start..run_stop) [{runs}]"
    )


COLUMNS = (
    "source_id", "kind", "benchmark", "model", "params", "active_params", "experts",
    "top_k", "seq_len", "method", "gpu_a", "gpu_b", "gpus_a", "gpus_b", "precision_a",
    "precision_b", "metric", "value_a", "value_b", "tokens_a", "tokens_b",
    "measured_speedup", "excluded", "quote_a", "quote_b", "statement", "source",
)  # fmt: skip


def pair_row(a: Submission, b: Submission, kind: str = "mlperf-log") -> dict[str, str]:
    model, params, seq, method = MODELS[a.benchmark]
    pa, ea = precision_of(a)
    pb, eb = precision_of(b)

    def tokens(sub: Submission) -> str:
        mean = sub.mean_samples
        if mean is None:
            return ""
        return f"{mean if sub.benchmark == 'gpt3' else mean * seq:.0f}"

    key = (a.round, a.benchmark, a.gpus, a.gpu or "", b.gpu or "")
    statement, said = STATEMENTS.get(key, ("", ""))
    rounds = a.round if a.round == b.round else f"{a.round} vs v{b.round}"
    repos = (
        f"github mlcommons/training_results_v{a.round}@{a.commit}"
        if a.round == b.round
        else f"github mlcommons/training_results_v{a.round}@{a.commit} and "
        f"training_results_v{b.round}@{b.commit}"
    )
    return {
        "source_id": f"mlperf-training-v{rounds}",
        "kind": kind,
        "benchmark": f"MLPerf Training v{rounds} closed, {a.benchmark}",
        "model": model,
        "params": params,
        "active_params": "",
        "experts": "",
        "top_k": "",
        "seq_len": str(seq),
        "method": method,
        "gpu_a": a.gpu or "",
        "gpu_b": b.gpu or "",
        "gpus_a": str(a.gpus),
        "gpus_b": str(b.gpus),
        "precision_a": pa,
        "precision_b": pb,
        "metric": "time to train, minutes (olympic mean of run_start..run_stop); measured "
        "speedup = minutes A x GPUs A / (minutes B x GPUs B)",
        "value_a": f"{a.score:.4f}",
        "value_b": f"{b.score:.4f}",
        "tokens_a": tokens(a),
        "tokens_b": tokens(b),
        "measured_speedup": f"{a.score * a.gpus / (b.score * b.gpus):.4f}",
        "excluded": EXCLUDED.get(key, ""),
        "quote_a": side_quote(a, pa, ea),
        "quote_b": side_quote(b, pb, eb),
        "statement": f"{statement} [{said}]" if statement else "",
        "source": f"{repos}: {a.submitter}/results/{a.system}/{a.benchmark}/ vs "
        f"{b.submitter}/results/{b.system}/{b.benchmark}/",
    }


def rows(subs: list[Submission]) -> list[dict[str, str]]:
    out = [pair_row(a, b) for a, b in select_pairs(subs)]
    index = {(s.round, s.submitter, s.system, s.benchmark): s for s in subs}
    for kind, side_a, side_b, bench, note, statement in EXTRA_PAIRS:
        row = pair_row(index[(*side_a, bench)], index[(*side_b, bench)], kind)
        row["statement"] = f"{note} {statement}"
        out.append(row)
    return out + [dict(r) for r in STATED]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, required=True)
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--every-submission",
        action="store_true",
        help="every submission pair (same round, benchmark, GPU count), no selection rules",
    )
    args = parser.parse_args(argv)
    subs = [s for version in ROUNDS for s in load_round(args.mirror, version)]
    chosen = every_pair(subs) if args.every_submission else None
    table = [pair_row(a, b) for a, b in chosen] if chosen is not None else rows(subs)
    handle = args.out.open("w", encoding="utf-8", newline="") if args.out else sys.stdout
    writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(table)
    unknown = [r for r in table if "unknown" in (r["precision_a"], r["precision_b"])]
    print(f"{len(table)} pairs; {len(unknown)} with a precision not found", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
