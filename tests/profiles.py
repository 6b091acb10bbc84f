"""Hypothesis profiles: ``ci`` (the default, sized for CI on 2 cores, derandomized so a
run draws the same examples every time and CI cannot fail by luck) and ``long``
(``HYPOTHESIS_PROFILE=long``, random, with the example counts the issues ask for: the
profile that explores). Tests that set their own ``max_examples`` scale it with
:func:`examples`."""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.register_profile("ci", settings(deadline=None, derandomize=True))
settings.register_profile("long", settings(deadline=None, max_examples=1000,
                                           suppress_health_check=[HealthCheck.too_slow]))
settings.load_profile(PROFILE)


def examples(ci: int, long: int | None = None) -> int:
    """``ci`` examples in the CI profile; ``long`` (default 10x) in the long profile."""
    if PROFILE == "long":
        return long if long is not None else 10 * ci
    return ci
