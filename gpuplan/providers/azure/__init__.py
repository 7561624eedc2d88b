"""The Azure adapter (azure-mgmt-compute, azure-monitor-querymetrics, azure-identity).

Import :mod:`gpuplan.providers.azure.provider` lazily: the Azure SDKs load there, never
when the CLI starts.
"""
