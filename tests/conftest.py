"""Shared test fixtures: where ../shared is, and whether the oracle is installed."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("SHARDY_REF_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "conformance" / "corpus"
sys.path.insert(0, str(ROOT / "tools"))
# every pipeline the tests run (in this process and the command lines they start) checks
# that the IR's change count saw each change the verifier would see (pass_manager.py)
os.environ["SHARDY_REF_CROSS_CHECK_CHANGES"] = "1"

from tests import profiles  # noqa: E402,F401  (registers and loads the hypothesis profile)


def pytest_collection_modifyitems(config, items):
    import corpus as corpus_tools

    for item in items:
        if "conformance" in item.keywords and not CORPUS.exists():
            item.add_marker(pytest.mark.skip(reason="../shared/conformance is absent"))
        if "oracle" in item.keywords and not corpus_tools.oracle_available():
            item.add_marker(pytest.mark.skip(reason="oracle venv absent (../shared/oracle/setup)"))
