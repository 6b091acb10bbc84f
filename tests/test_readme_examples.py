"""The README's Python examples run as written (the fuzzing section's use of the public
strategies and invariants by another implementation)."""
from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT

BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
RUNNABLE = [b for b in BLOCKS if "shardy_ref.testing" in b]


def test_the_readme_has_runnable_fuzzing_examples():
    assert len(RUNNABLE) >= 2


@pytest.mark.parametrize("code", RUNNABLE, ids=lambda c: c.split("import ")[1].split()[0])
def test_readme_example_runs(code):
    exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
