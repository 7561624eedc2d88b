"""Kubernetes GPU workloads through lightkube: discovery, pod metrics, reclaim and restore.

lightkube is imported inside these modules only (``gpuplan[kubernetes]``)."""
