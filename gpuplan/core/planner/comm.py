"""Communication: what the interconnect costs a training step, as an MFU factor.

Three kinds of traffic, each a share of compute time left exposed (not hidden behind
compute), turned into a factor ``1 / (1 + exposed)``:

- in-node: gradient reduce-scatter / all-gather and tensor-parallel traffic over NVLink
  (or PCIe): ``INTRA_EXPOSED x (900 GB/s / link)``, one node of NVLink 4 as reference;
- scale-out: data-parallel traffic across NVLink domains grows with the ring/tree depth,
  ``INTER_EXPOSED_PER_DOUBLING x log2(domains) x min(4, 400 / Gbit/s per GPU)``; a domain is
  the node (HGX, OAM) or, where the spec table gives one, the rack-scale NVLink domain (72
  GPUs of a GB200/GB300 NVL72 rack, whatever the instance size);
- step synchronisation (frozen-base fine-tuning: LoRA, QLoRA): the data-parallel
  collectives that end each optimizer step have no weight-gradient compute to hide behind
  (the base gets none), and a ring collective's latency grows with the ranks it crosses
  over the scale-out fabric, so they cost ``SYNC_FLOP x (domains - 1) / step FLOPs per GPU``
  of a step: small global batches on many NVLink domains pay it (MLPerf Llama 2 70B LoRA on
  512 GPUs: 64 HGX nodes, or 8 NVL72 racks);
- expert all-to-all (mixture-of-experts): each token is sent to ``top_k`` experts and
  back, forward and backward (four all-to-alls of ``top_k x hidden`` values per MoE layer,
  GShard, Lepikhin et al. 2020); the time they take against the time the token's compute
  takes, times the share not overlapped (``A2A_EXPOSED``; DeepSeek-V3 report Sec 3.2.1:
  computation to communication about 1:1 before DualPipe).

Bandwidths come from the spec table (NVLink per GPU) and the catalog (instance network
per GPU); a GPU no catalog sells gets its generation's usual fabric (``FABRIC_GBIT``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplan.core.planner import calibration as cal

if TYPE_CHECKING:
    from gpuplan.core.catalog.gpus import GpuSpec

REFERENCE_LINK_GBS = 900.0
"""NVLink 4 (H100 SXM), GB/s bidirectional per GPU: the in-node reference."""
PCIE_GBS = 64.0
"""PCIe Gen4 x16, GB/s bidirectional: parts without NVLink."""
REFERENCE_FABRIC_GBIT = 400.0
"""400 Gbit/s InfiniBand/EFA per GPU (DGX H100, p5): the scale-out reference."""
FABRIC_GBIT: tuple[tuple[str, float], ...] = (
    ("Blackwell", 400.0),
    ("Hopper", 400.0),
    ("CDNA 3", 400.0),
    ("Ampere (GA100)", 200.0),
    ("CDNA 2", 200.0),
    ("Volta", 100.0),
)
"""Usual per-GPU fabric of a cluster of these GPUs when the catalog does not say (DGX/HGX
reference designs: 8 x 400G for H100/B200, 8 x 200G for A100, 4 x 100G... for V100)."""
DEFAULT_FABRIC_GBIT = 50.0
"""PCIe inference parts: cloud instances give them 25-100 Gbit/s per instance."""
NO_FABRIC_GBIT = DEFAULT_FABRIC_GBIT
"""An instance whose offer says it has no InfiniBand (a GPU cloud's on-demand VM or pod)
and states no figure: its nodes talk over an ordinary instance network, this much a node
(so a multi-node job on it pays the full slowdown), never the HGX reference fabric."""
MAX_SLOWDOWN = 4.0
"""A fabric below a quarter of the reference is not slower still in this model: jobs on it
use fewer, larger steps (gradient accumulation) to hide it."""
EP_SPAN = 64
"""GPUs an expert-parallel group spans at most (DeepSeek-V3: 64-way EP over 8 nodes)."""
FINETUNE_BATCH_SEQUENCES = 8.0
"""Global batch of a fine-tuning run that states none, in sequences (the MLPerf Llama 2 70B
LoRA reference and every submission on up to 64 GPUs: 8)."""
GPUS_PER_SEQUENCE = 8.0
"""A run without a stated batch gives each model-parallel group of this many GPUs (one node)
one sequence per step at least (MLPerf's 512-GPU LoRA runs: global batch 64, tensor x
context parallel 8)."""


@dataclass(frozen=True)
class Links:
    """Bandwidths one GPU of a placement sees."""

    link_gbs: float
    """In-node GPU-to-GPU, GB/s bidirectional."""
    fabric_gbit: float
    """Scale-out per GPU, Gbit/s."""


def offer_fabric(network_gbps: float | None, interconnect: str) -> float | None:
    """The scale-out bandwidth of one instance: the offer's figure; else, for an offer that
    says it has no InfiniBand, :data:`NO_FABRIC_GBIT`; else None (the GPU's usual fabric)."""
    if network_gbps is not None:
        return network_gbps
    if "no infiniband" in interconnect.lower():
        return NO_FABRIC_GBIT
    return None


def links(spec: GpuSpec, gpus_per_node: float, network_gbps: float | None) -> Links:
    link = spec.interconnect_gbs if spec.interconnect_gbs is not None else PCIE_GBS
    if network_gbps is not None and gpus_per_node > 0:
        fabric = network_gbps / max(1.0, gpus_per_node)
    else:
        fabric = next(
            (g for prefix, g in FABRIC_GBIT if spec.architecture.startswith(prefix)),
            DEFAULT_FABRIC_GBIT,
        )
    return Links(link, fabric)


def domain_size(spec: GpuSpec, gpus_per_node: float) -> float:
    """GPUs one NVLink domain joins: the spec table's rack-scale domain, else the node."""
    return max(1.0, gpus_per_node, float(spec.nvlink_domain or 0))


def domains(gpus: float, size: float) -> int:
    """NVLink domains ``gpus`` GPUs span, ``size`` GPUs each."""
    return max(1, math.ceil(gpus / max(size, 1.0) - 1e-9))


def sync_exposed(domain_count: int, step_flops_per_gpu: float) -> float:
    """Exposed share of a step's compute the end-of-step collectives take across domains."""
    if domain_count <= 1 or step_flops_per_gpu <= 0:
        return 0.0
    return cal.SYNC_FLOP * (domain_count - 1) / step_flops_per_gpu


def step_tokens_per_gpu(gpus: float, seq_len: int, global_batch: int | None) -> float:
    """Tokens one GPU runs per optimizer step of a fine-tuning run: the global batch
    (sequences) when given, else :data:`FINETUNE_BATCH_SEQUENCES`, never under one sequence
    per :data:`GPUS_PER_SEQUENCE` GPUs (a model-parallel group of one node holds one
    sequence at least)."""
    if global_batch:
        batch = float(global_batch)
    else:
        batch = max(FINETUNE_BATCH_SEQUENCES, gpus / GPUS_PER_SEQUENCE)
    return batch * seq_len / max(gpus, 1.0)


def intra_exposed(gpus: float, gpus_per_node: float, link: Links) -> float:
    if min(gpus, gpus_per_node) <= 1:
        return 0.0
    return cal.INTRA_EXPOSED * REFERENCE_LINK_GBS / link.link_gbs


def inter_exposed(domain_count: int, link: Links) -> float:
    if domain_count <= 1:
        return 0.0
    slowdown = min(MAX_SLOWDOWN, REFERENCE_FABRIC_GBIT / max(link.fabric_gbit, 1e-9))
    return cal.INTER_EXPOSED_PER_DOUBLING * math.log2(domain_count) * slowdown


def all_to_all_exposed(
    *,
    top_k: int,
    hidden: int,
    layers: int,
    bytes_per_value: float,
    seconds_per_token: float,
    gpus: float,
    gpus_per_node: float,
    link: Links,
) -> float:
    """Exposed share of the expert all-to-all against compute, per token on one GPU."""
    values = 4.0 * top_k * hidden * layers  # dispatch + combine, forward and backward
    span = min(gpus, float(EP_SPAN))
    remote = 0.0 if span <= gpus_per_node else 1.0 - gpus_per_node / span
    local_s = values * bytes_per_value * (1.0 - remote) / (link.link_gbs / 2 * 1e9)
    remote_s = values * bytes_per_value * remote / (link.fabric_gbit / 8 * 1e9)
    return cal.A2A_EXPOSED * (local_s + remote_s) / max(seconds_per_token, 1e-30)
