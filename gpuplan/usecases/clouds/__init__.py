"""The cloud registry: one entry per cloud and metrics source, and the adapters built from them."""
