"""The training planner: how long a training job takes and what it costs on every GPU.

Pure: workloads, the catalog and limits come in as values; ranked options go out.
Entry point: :func:`gpuplan.core.planner.ranking.plan`.
"""
