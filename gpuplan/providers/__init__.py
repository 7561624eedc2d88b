"""Provider edges: one adapter per cloud behind :class:`gpuplan.providers.base.CloudProvider`.

Each adapter imports its SDK inside its own module only, and maps SDK payloads to core
models right at the edge.
"""
