"""``gpuplan gpus``: the GPU spec table (dense peaks), as a table, JSON or CSV."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from gpuplan.cli.common import add_catalog_dir, add_output_format, split_list
from gpuplan.cli.render import format_cell, print_csv, print_json, render_table

COLUMNS = (
    "name",
    "vendor",
    "architecture",
    "launch_year",
    "memory_gb",
    "memory_bandwidth_tbs",
    "fp32_tflops",
    "tf32_tflops",
    "bf16_tflops",
    "fp16_tflops",
    "fp8_tflops",
    "fp4_tflops",
    "bf16_matmul_tflops",
    "interconnect",
    "interconnect_gbs",
    "source",
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "gpus",
        help="list the GPU spec table (memory, bandwidth, dense TFLOP/s)",
        description="GPU specs: dense peak TFLOP/s per precision, memory, interconnect.",
    )
    p.add_argument("--gpu", action="append", help="only these GPUs (names or aliases)")
    p.add_argument(
        "--prices",
        action="store_true",
        help="one line per GPU: the cheapest on-demand and spot price per GPU-hour in the "
        "catalog, and where (cloud, region, instance)",
    )
    p.add_argument(
        "--per-cloud", action="store_true", help="with --prices: one line per GPU and cloud"
    )
    p.add_argument("--provider", action="append", help="with --prices: only these clouds")
    p.add_argument(
        "--region",
        action="append",
        help="with --prices: region names or groups (us, europe, asia, ...)",
    )
    p.add_argument(
        "--include-stale",
        action="store_true",
        help="with --prices: a price over 90 days old competes by price alone (default: "
        "cheapest only where no fresh price is)",
    )
    add_output_format(p)
    add_catalog_dir(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.prices:
        from gpuplan.cli.gpu_prices import run_prices

        return run_prices(args)
    from gpuplan.loaders.catalog import load_gpus

    table = load_gpus(args.catalog_dir)
    names = table.resolve_many(split_list(args.gpu)) if args.gpu else table.names
    specs = [table.get(n) for n in names]
    records = [asdict(s) for s in specs]
    if args.json:
        print_json(records)
        return 0
    if args.csv:
        print_csv(COLUMNS, records)
        return 0
    headers = [
        "GPU",
        "arch",
        "year",
        "mem GB",
        "TB/s",
        "fp32",
        "tf32",
        "bf16",
        "fp16",
        "fp8",
        "fp4",
        "interconnect",
    ]
    rows = [
        [
            s.name,
            s.architecture,
            str(s.launch_year),
            format_cell(s.memory_gb, digits=0),
            format_cell(s.memory_bandwidth_tbs),
            format_cell(s.fp32_tflops, digits=1),
            format_cell(s.tf32_tflops, digits=1),
            format_cell(s.bf16_tflops, digits=1),
            format_cell(s.fp16_tflops, digits=1),
            format_cell(s.fp8_tflops, digits=1),
            format_cell(s.fp4_tflops, digits=1),
            s.interconnect + (f" {s.interconnect_gbs:g} GB/s" if s.interconnect_gbs else ""),
        ]
        for s in specs
    ]
    # Left out first to fit the terminal: architecture, launch year, fp32, tf32, fp16.
    right = [False, False] + [True] * 9 + [False]
    print(render_table(headers, rows, align_right=right, drop=(1, 2, 5, 6, 8), wrap_last=True))
    print("\nTFLOP/s are dense peaks per GPU (datasheet sparse figures halved).")
    return 0
