"""Use cases: what the CLI, TUI and Python API do, composed from loaders, providers and core."""
