"""``shardy-ref``: the human-facing command line.

    shardy-ref print FILE     parse FILE and print it back as upstream's printer would
    shardy-ref run FILE       propagate, partition and run FILE on every device of its mesh
    shardy-ref check FILE     run FILE partitioned and on one device; compare the results

Run ``shardy-ref run --help`` or ``shardy-ref check --help`` for their options.
"""
from __future__ import annotations

import sys

from shardy_ref.tools import simulate_cmd


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    command, *rest = argv
    if command == "print" and len(rest) == 1:
        from shardy_ref.tools.opt import Options, run
        return run(Options(input=rest[0]))
    if command in simulate_cmd.COMMANDS:
        return simulate_cmd.main(command, rest)
    sys.stderr.write(f"shardy-ref: unknown command {' '.join(argv)!r}; see shardy-ref --help\n")
    return 2


if __name__ == "__main__":
    sys.exit(main())
