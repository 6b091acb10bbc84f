"""The verifier's index of lazily imported rule modules (issue 30) is current and safe."""
from __future__ import annotations

import json
import subprocess
import sys

from shardy_ref.ir.verify.rule_index import LAZY_MODULES, LAZY_RULES

# In a fresh process: import the rule modules every run needs, then each lazy one, and
# record which names each import registered checks under.
PROBE = """
import importlib, json
from shardy_ref.ir import verify
from shardy_ref.ir.verify.rule_index import LAZY_MODULES
TABLES = ("OP_VERIFIERS", "ATTR_VERIFIERS", "FUNC_ATTR_VERIFIERS", "SYMBOL_USE_VERIFIERS",
          "EXIT_VERIFIERS")
def snapshot():
    return {(t, n, id(c)) for t in TABLES for n, cs in getattr(verify, t).items()
            for c in (cs if isinstance(cs, list) else [cs])}
importlib.import_module("shardy_ref.ir.verify.core")
for name in verify._RULE_MODULES:
    if name not in LAZY_MODULES:
        importlib.import_module("shardy_ref.ir.verify." + name)
base = snapshot()
added = {}
for name in LAZY_MODULES:
    before = snapshot()
    importlib.import_module("shardy_ref.ir.verify." + name)
    added[name] = sorted({n for _, n, _ in snapshot() - before})
print(json.dumps({"base": sorted({n for _, n, _ in base}), "added": added}))
"""


def _probe() -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


def test_lazy_rule_index_is_what_the_lazy_modules_register_and_theirs_alone():
    probe = _probe()
    registered = {n: m for m, names in probe["added"].items() for n in names}
    assert registered == LAZY_RULES, "stale: run python -m shardy_ref.ir.verify.rule_index"
    assert not set(LAZY_RULES) & set(probe["base"]), "a lazy name has other checks"
    assert set(LAZY_RULES.values()) == set(LAZY_MODULES)


PLAIN = """func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}"""
SDY = """sdy.mesh @m = <["x"=2]>
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = sdy.all_gather [{}] %a out_sharding=<@m, [{}]> : tensor<2xf32>
  return %0 : tensor<2xf32>
}"""
VERIFY = """
import sys
from shardy_ref.ir.verify import collect_errors
from shardy_ref.parser import parse_module
for text in sys.argv[1:]:
    errors = collect_errors(parse_module(text))
    print(sorted(m.rsplit(".", 1)[1] for m in sys.modules if m in (
        "shardy_ref.ir.verify.collectives", "shardy_ref.ir.verify.sdy_ops",
        "shardy_ref.ir.verify.rules")), [e.message for e in errors])
"""


def _verify(*texts: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", VERIFY, *texts], capture_output=True,
                         text=True, check=True)
    return out.stdout.splitlines()


def test_first_verify_imports_sdy_rules_only_for_names_it_uses():
    error = "[\"'sdy.all_gather' op collective on operand without sharding\"]"
    assert _verify(PLAIN, SDY) == ["[] []", f"['collectives', 'rules', 'sdy_ops'] {error}"]
    assert _verify(SDY, PLAIN) == [f"['collectives'] {error}",
                                   "['collectives', 'rules', 'sdy_ops'] []"]
