"""Toycloud: a fifth cloud that lives only in the tests, to prove what adding a cloud takes.

Its whole package is here: the adapter (:mod:`.adapter`), the price fetcher
(:mod:`.prices`), the type discoverer and region naming (:mod:`.listing`), its policy
sections (``scope.toy``: :mod:`.scope`; ``idle.metrics.toy``: :mod:`.metrics`; its keys
of ``bill``: :mod:`.bill`), the catalog file (``toy.csv``), its facts (:mod:`.facts`) and
the one registry entry (:mod:`.entry`). Nothing under ``gpuplan/`` names it:
``tests/e2e/clouds/test_toy_cloud.py`` registers the entry at run time and drives catalog,
fleet, stop-idle and catalog refresh through the real code.
"""
