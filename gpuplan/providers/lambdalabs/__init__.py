"""Lambda (lambda.ai): a GPU cloud gpuplan prices and plans on, without a lifecycle adapter.

Its offers live in ``pricing/lambda.csv`` (read from Lambda's pricing page, with the page
and the day in each row's ``source``); :mod:`.prices` refreshes them from Lambda's own
API, ``GET /api/v1/instance-types`` (``price_cents_per_hour``), with ``LAMBDA_API_KEY``.
On-demand instances have NVLink inside (SXM sizes) but no InfiniBand between them (that
comes with Lambda's 1-Click Clusters, sold by quote); the catalog rows say so, and the
planner prices a multi-node job on them over an ordinary network.
"""
