"""Keep modules small enough to read beside the spec (STYLE.md habit 4)."""
from __future__ import annotations

from pathlib import Path

MAX_LINES = 800
PACKAGE = Path(__file__).resolve().parent.parent / "shardy_ref"


def test_no_module_is_over_the_line_limit():
    sizes = {p: len(p.read_text(encoding="utf-8").splitlines()) for p in PACKAGE.rglob("*.py")}
    too_big = {str(p.relative_to(PACKAGE)): n for p, n in sizes.items() if n > MAX_LINES}
    print(f"shardy_ref: {sum(sizes.values())} lines in {len(sizes)} modules")
    assert not too_big, f"split these modules (over {MAX_LINES} lines): {too_big}"
