"""Where the money went: audit, budget, savings and the Prometheus exporter."""
