"""The op catalog: every op kind the interpreter runs that can appear in a sharded program,
as a small builder that emits it (and what it needs: new arguments, runtime indices,
converts to and from other element types) on a value of a given shape.

One catalog serves three users: the op x sharding sweep
(``tests/partition/test_op_sharding_sweep.py``) runs each kind with each dimension of each
argument sharded by each mesh axis, a sub-axis and two axes; the random programs of
:mod:`shardy_ref.testing.programs` draw kinds from it, so the fuzzer's
``per_device_equals_single_device`` sees every kind; and ``shardy-ref fuzz --stats`` counts
how often each kind was drawn.

A builder is ``fn(site, x, shape) -> (value, shape) | None``: it emits ops on ``site``
(:class:`~shardy_ref.testing.catalog.site.Site`) reading the f32 value ``x`` of ``shape``
and returns an f32 result, or None when the kind does not fit that shape.
"""
from __future__ import annotations

from shardy_ref.testing.catalog.kinds import KINDS, NOT_SWEPT, OpKind, kinds_covering
from shardy_ref.testing.catalog.site import Site

__all__ = ["KINDS", "NOT_SWEPT", "OpKind", "Site", "kinds_covering"]
