"""``shardy-ref print FILE``: parse FILE (``-`` for stdin), verify it and print it back as
upstream's printer would (``shardy-ref-opt FILE`` with no passes)."""
from __future__ import annotations

import sys

USAGE = """usage: shardy-ref print FILE

Parse FILE (- for stdin), verify it and print it back as upstream's printer would."""


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if len(argv) != 1 or (argv[0] != "-" and argv[0].startswith("-")):
        sys.stderr.write(USAGE.split("\n")[0] + "\nshardy-ref print: error: expected "
                         f"one FILE, got {' '.join(argv) or 'none'}\n")
        return 2
    from shardy_ref.tools.opt import Options, run

    return run(Options(input=argv[0]))
