"""Crusoe Cloud: a GPU cloud gpuplan prices and plans on, without a lifecycle adapter.

Its offers (``pricing/crusoe.csv``) are the on-demand per-GPU-hour prices of
crusoe.ai/cloud/pricing; the HGX H100, H200 and A100 SXM sizes are InfiniBand ones
(``-ib``), the L40S and PCIe sizes have none. Crusoe's API lists capacity, not prices,
so ``catalog refresh`` skips it with one line.
"""
