"""``shardy-ref``: the human-facing command line.

{commands}

Run ``shardy-ref run --help`` or ``shardy-ref check --help`` for their options. A bug of
ours exits 70 with ``internal error in ... on OP``; ``--debug`` (anywhere) or
``SHARDY_REF_DEBUG=1`` shows its traceback instead.

The commands are those of :data:`shardy_ref.tools.command.COMMANDS`: ``--help`` shows
this text with a line for each in place of ``{commands}``.
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


def _help() -> str:
    from shardy_ref.tools.command import usage_lines

    return __doc__.split("\n\nThe commands are")[0].strip().format(commands=usage_lines())


def _dispatch(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(_help())
        return 0
    if argv[0] == "--version":
        from shardy_ref.tools.opt import print_version
        print_version("shardy-ref")
        return 0
    from shardy_ref.tools.command import COMMANDS

    command = COMMANDS.get(argv[0])
    if command is None:
        sys.stderr.write(f"shardy-ref: unknown command {' '.join(argv)!r}; see shardy-ref "
                         "--help\n")
        return 2
    return command.run(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
