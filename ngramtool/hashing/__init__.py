"""Canonical ids to rows, bit-identical on every backend: the backends, the streaming
hasher, rows of raw-id spans (tokens-only indexes) and the serving state."""
