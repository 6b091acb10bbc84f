"""Propagation debugging metadata: sharding origins and propagation edges."""
