"""Verifier rules (being written)."""
