"""The offline scientist: a deterministic model for demos and tests (no network)."""
