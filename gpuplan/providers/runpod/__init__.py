"""RunPod (runpod.io): GPU pods priced per GPU-hour in two tiers, catalog-only in gpuplan.

Secure Cloud (RunPod's own data centres) and Community Cloud (vetted third-party hosts)
price the same GPU apart; the catalog (``pricing/runpod.csv``) has both, the tier in the
instance type (``h100-sxm.8x.secure``), in the one region ``global``: RunPod prices a GPU
the same wherever a pod lands. Pods have NVLink between SXM GPUs of one pod and no
InfiniBand between pods (Instant Clusters are a separate product). :mod:`.prices`
refreshes from RunPod's GraphQL API (``gpuTypes``: ``securePrice``, ``communityPrice``)
with ``RUNPOD_API_KEY``.
"""
