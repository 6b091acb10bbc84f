"""``shardy-ref``: the human-facing command line.

    shardy-ref print FILE     parse FILE and print it back as upstream's printer would
    shardy-ref run FILE       propagate, partition and run FILE on every device of its mesh
    shardy-ref check FILE     run FILE partitioned and on one device; compare the results
    shardy-ref run|check --backend xla FILE   the partitioned program run by XLA (jax extra)
    shardy-ref fuzz           check Shardy's invariants on random sharded programs
    shardy-ref diff --tool CMD --pipeline PASSES   random programs through ours and CMD
    shardy-ref show FILE [--value NAME] [--svg OUT]   draw meshes and who holds which block
    shardy-ref explain FILE [--value NAME]   why each value is sharded so; its collectives

Run ``shardy-ref run --help`` or ``shardy-ref check --help`` for their options. A bug of
ours exits 70 with ``internal error in ... on OP``; ``--debug`` (anywhere) or
``SHARDY_REF_DEBUG=1`` shows its traceback instead.
"""
from __future__ import annotations

import sys

# nothing heavy at import: the console script imports this module before main() can turn
# a Ctrl-C into exit status 130 (the commands import what they need when dispatched)
_DEBUG_FLAGS = ("-debug", "--debug")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    debug = any(a in _DEBUG_FLAGS for a in argv)
    argv = [a for a in argv if a not in _DEBUG_FLAGS]
    from shardy_ref.tools.stack import run_with_deep_stack

    try:
        # deeply nested modules: every command walks regions recursively somewhere
        return run_with_deep_stack(lambda: _dispatch(argv))
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        return 130
    except ModuleNotFoundError as e:
        extra = EXTRAS.get((e.name or "").partition(".")[0])
        if extra is None:
            return _internal_error(e, argv, debug)
        where = f"shardy-ref {argv[0]}" if argv else "shardy-ref"
        sys.stderr.write(f"{where}: error: this command needs {e.name}, which the '{extra}' "
                         f"extra installs: pip install 'shardy-ref[{extra}]'\n")
        return 1
    except Exception as e:
        return _internal_error(e, argv, debug)


# optional dependencies, and the extra of pyproject.toml that installs each
EXTRAS = {"hypothesis": "testing", "rich": "testing", "jax": "jax", "jaxlib": "jax"}


def _internal_error(e: Exception, argv: list[str], debug: bool) -> int:
    from shardy_ref.ir.location import Location
    from shardy_ref.tools.opt import debug_requested, report_internal_error

    files = [a for a in argv[1:] if a == "-" or not a.startswith("-")]
    source = Location("<stdin>" if files[:1] == ["-"] else (files or ["shardy-ref"])[0],
                      0, 0)
    where = f"shardy-ref {argv[0]}" if argv else "shardy-ref"
    return report_internal_error(e, where, source, debug or debug_requested(None),
                                 sys.stderr)


def _dispatch(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if argv[0] == "--version":
        from shardy_ref.tools.opt import print_version
        print_version("shardy-ref")
        return 0
    command, *rest = argv
    if command == "print":
        return _print(rest)
    if command == "diff":
        from shardy_ref.tools import diff_cmd
        return diff_cmd.main(rest)
    if command == "show":
        from shardy_ref.tools import show_cmd
        return show_cmd.main(rest)
    if command == "explain":
        from shardy_ref.tools import explain_cmd
        return explain_cmd.main(rest)
    if command == "fuzz":
        from shardy_ref.tools import fuzz_cmd
        return fuzz_cmd.main(rest)
    if command in ("run", "check"):
        from shardy_ref.tools import simulate_cmd
        return simulate_cmd.main(command, rest)
    sys.stderr.write(f"shardy-ref: unknown command {' '.join(argv)!r}; see shardy-ref --help\n")
    return 2


PRINT_USAGE = """usage: shardy-ref print FILE

Parse FILE (- for stdin), verify it and print it back as upstream's printer would."""


def _print(rest: list[str]) -> int:
    if rest and rest[0] in ("-h", "--help"):
        print(PRINT_USAGE)
        return 0
    if len(rest) != 1 or (rest[0] != "-" and rest[0].startswith("-")):
        sys.stderr.write(PRINT_USAGE.split("\n")[0] + "\nshardy-ref print: error: expected "
                         f"one FILE, got {' '.join(rest) or 'none'}\n")
        return 2
    from shardy_ref.tools.opt import Options, run

    return run(Options(input=rest[0]))


if __name__ == "__main__":
    sys.exit(main())
