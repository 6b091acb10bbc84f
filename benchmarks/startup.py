"""Tool start-up, measured side by side in one run (issue 30's targets in brackets).

CPU time (the child's user + system time, from ``resource.getrusage``; best of N) of
``shardy-ref-translate --interpret`` on a one-op check test and ``shardy-ref-opt`` on a
one-op module [each <= 0.25 s], beside ``python -c "import numpy"`` and beside the real
interpreter, ``stablehlo-translate --interpret`` on the same test (from
``../shared/oracle/`` next to this checkout, or ``$STABLEHLO_TRANSLATE``; skipped with a
note when absent), with our ratio to it.

    python benchmarks/startup.py [--repeat N]
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from shardy_ref.tools.arg_types import positive_int

ONE_OP = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""
ONE_CHECK = """func.func @main() {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  check.expect_eq_const %0, dense<[2.0, 4.0]> : tensor<2xf32>
  func.return
}
"""
TARGET = 0.25


def cpu_time(cmd: list[str], repeat: int) -> float:
    """The best child CPU time of ``repeat`` runs of ``cmd`` (which must succeed)."""
    best = float("inf")
    env = dict(os.environ, OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return best


def _tool(name: str) -> list[str]:
    """The console script next to this Python, else the module it runs."""
    script = Path(sys.executable).with_name(name)
    if script.exists():
        return [str(script)]
    module = {"shardy-ref-translate": "translate", "shardy-ref-opt": "opt"}[name]
    return [sys.executable, "-c", f"import sys; from shardy_ref.tools.{module} import main; "
            "sys.exit(main())"]


def _oracle() -> str | None:
    path = os.environ.get("STABLEHLO_TRANSLATE") or str(
        Path(__file__).resolve().parents[2] / "shared" / "oracle" / "stablehlo_translate")
    return path if os.access(path, os.X_OK) else shutil.which("stablehlo-translate")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=positive_int, default=10)
    repeat = ap.parse_args().repeat
    with tempfile.TemporaryDirectory() as tmp:
        one, check = Path(tmp, "one.mlir"), Path(tmp, "one_check.mlir")
        one.write_text(ONE_OP)
        check.write_text(ONE_CHECK)
        cpu_time([*_tool("shardy-ref-translate"), "--interpret", str(check)], 1)  # warm caches
        numpy = cpu_time([sys.executable, "-c", "import numpy"], repeat)
        translate = cpu_time([*_tool("shardy-ref-translate"), "--interpret", str(check)], repeat)
        opt = cpu_time([*_tool("shardy-ref-opt"), str(one)], repeat)
        oracle = _oracle()
        reference = cpu_time([oracle, "--interpret", str(check)], repeat) if oracle else None
    print(f"start-up, CPU time (user + sys, best of {repeat}; "
          f"python -c 'import numpy' {numpy:.3f} s):")
    for name, t in (("shardy-ref-translate --interpret", translate), ("shardy-ref-opt", opt)):
        ratio = f", ours / reference {t / reference:.2f}" if reference else ""
        print(f"  {name}: {t:.3f} s (target <= {TARGET}){ratio}")
    if reference is None:
        print("  stablehlo-translate --interpret: not found (set STABLEHLO_TRANSLATE), skipped")
    else:
        print(f"  stablehlo-translate --interpret (reference): {reference:.3f} s")


if __name__ == "__main__":
    main()
