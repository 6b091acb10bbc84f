"""The README's Python examples run as written (the fuzzing section's use of the public
strategies and invariants by another implementation)."""
from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT
from tests.profiles import PROFILE

BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
RUNNABLE = [b for b in BLOCKS if "shardy_ref.testing" in b]


def test_the_readme_has_runnable_fuzzing_examples():
    assert len(RUNNABLE) >= 2


@pytest.mark.parametrize("code", RUNNABLE, ids=lambda c: c.split("import ")[1].split()[0])
def test_readme_example_runs(code):
    exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})


def test_the_strategies_example_passes_on_a_loaded_machine(monkeypatch):
    """Under hypothesis's own default settings (a 200 ms deadline), with every check slowed
    to a quarter second as on a busy machine, the example still passes: it sets
    ``deadline=None``."""
    import time

    from hypothesis import settings

    import shardy_ref.ir.verify as verify

    code = next(b for b in RUNNABLE if "testing.strategies import programs" in b)
    real = verify.verify_module

    def slow(module):
        time.sleep(0.25)
        return real(module)

    monkeypatch.setattr(verify, "verify_module", slow)
    previous = settings.default
    settings.load_profile("default")
    try:
        exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
    finally:
        settings.load_profile(PROFILE)
    assert settings.default == previous
