"""Vast.ai: a GPU marketplace, catalog-only in gpuplan.

Every host sets its own price and prices move by the hour, so a catalog row is a stated
statistic of the offers (the median per-GPU price of verified, rentable on-demand
offers), never the cheapest outlier; each row's ``source`` names the statistic, the
number of offers and the day. :mod:`.prices` recomputes it from Vast.ai's offer search
(``POST /api/v0/bundles/``), which answers without a key (``VAST_API_KEY`` is sent when
set). Offers have no InfiniBand between machines.
"""
