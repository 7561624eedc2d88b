"""The GCP adapter (google-cloud-compute, google-cloud-monitoring).

Import :mod:`gpuplan.providers.gcp.provider` lazily: the Google SDKs load there (about
1.3 s cold), never when the CLI starts.
"""
