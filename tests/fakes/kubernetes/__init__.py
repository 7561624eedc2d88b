"""An independent fake Kubernetes API server (TLS on loopback) and dcgm-exporter series.

:mod:`.server` serves the REST paths gpuplan's Kubernetes provider calls, with the API
server's own rules where they matter to a client: paging (``limit``/``continue``),
patch content types (strategic merge only for built-in kinds), optimistic concurrency
(409 on a stale ``resourceVersion``), ``dryRun=All``, RBAC refusals (403) and throttling
(429 with ``Retry-After``). Every request is logged (method, path, query, content type),
so a test judges what the client did from the wire. :mod:`.scenario` builds clusters;
:mod:`.prometheus` serves dcgm-exporter and cAdvisor series with pod labels.
"""
