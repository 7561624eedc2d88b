"""Edges that read the project's own data files (catalog, GPU specs, policies) into core models."""
