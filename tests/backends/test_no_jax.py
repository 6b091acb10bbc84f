"""Without jax (the ``jax`` extra) the bridge says what to install, never a traceback:
``run_on_xla``, ``from_jax`` and ``shardy-ref run --backend xla`` (jax's import made to fail
here, so the test runs with or without jax installed)."""
from __future__ import annotations

import sys

import pytest

from shardy_ref.backends import MissingExtraError, run_on_xla
from shardy_ref.frontends import from_jax
from shardy_ref.tools.cli import main
from tests.conftest import ROOT

MLP = ROOT / "examples" / "jax" / "sim_mlp_col_row.mlir"
HINT = "pip install -e '.[jax]'"


@pytest.fixture
def no_jax(monkeypatch):
    for name in [m for m in sys.modules if m == "jax" or m.startswith("jax.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "jax", None)  # import jax raises ImportError


def test_run_on_xla_names_the_extra(no_jax):
    with pytest.raises(MissingExtraError, match="needs jax, which is not installed") as e:
        run_on_xla(MLP.read_text())
    assert HINT in str(e.value) and "shardy-ref[jax]" in str(e.value)


def test_from_jax_names_the_extra(no_jax):
    with pytest.raises(MissingExtraError, match=r"from_jax needs jax.*\.\[jax\]"):
        from_jax(lambda x: x, 1.0)


def test_cli_names_the_extra(no_jax, capsys):
    assert main(["run", "--backend", "xla", "--quiet", str(MLP)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("shardy-ref run: error: the xla backend needs jax") and HINT in err
    assert "Traceback" not in err
