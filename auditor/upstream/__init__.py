"""Upstream: the API of one version, loaded statically (model, loader, module index, resolve, callables, synthesis, relocate, diff)."""
