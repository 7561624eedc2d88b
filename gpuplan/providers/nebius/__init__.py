"""Nebius AI Cloud: a GPU cloud gpuplan prices and plans on, without a lifecycle adapter.

Its offers (``pricing/nebius.csv``) are the pay-as-you-go per-GPU-hour prices of
nebius.com/prices (GPU, vCPUs and RAM billed as one item since October 2025), sold in
presets of 1 or 8 GPUs; 8-GPU presets join InfiniBand fabrics (3.2 Tbit/s a node), the
1-GPU ones none. Its price list is read through a signed gRPC API that gpuplan does not
call, so ``catalog refresh`` skips it with one line.
"""
