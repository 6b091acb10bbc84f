"""``shardy-ref``'s commands: one table entry each, the help made from the table, and the
one way a command's failure becomes its exit status (as xDSL's ``CommandLineTool`` is the
one base of its tools).

A command is a module whose ``main(argv)`` returns the exit status; :func:`tool_command`
wraps it so that a :class:`~shardy_ref.ir.diagnostics.ShardyRefError` it raises is
reported and ends it with the error's ``exit_status`` (the exception hierarchy is the map:
1 for an error about the input, 2 for a usage error), a closed pipe with 1 and Ctrl-C with
130. An error with a location is printed as ``file:line:col: error: message``; a
:class:`~shardy_ref.ir.diagnostics.ToolError` (a file that cannot be read, a bad flag
value) after the command's name.
"""
from __future__ import annotations

import functools
import importlib
import sys
from dataclasses import dataclass

# nothing heavy at import: the console script imports this module before a command runs
COLUMN = 30  # where the help's descriptions start


@dataclass(frozen=True, slots=True)
class Command:
    """One ``shardy-ref`` command: its name, the module whose ``function(argv)`` runs it
    (imported only when it runs: start-up stays small) and its help lines, each a synopsis
    after ``shardy-ref`` and what it does."""

    name: str
    module: str
    usage: tuple[tuple[str, str], ...]
    function: str = "main"

    def run(self, argv: list[str]) -> int:
        return getattr(importlib.import_module(self.module), self.function)(argv)


COMMANDS: dict[str, Command] = {c.name: c for c in (
    Command("print", "shardy_ref.tools.print_cmd", (
        ("print FILE", "parse FILE and print it back as upstream's printer would"),)),
    Command("run", "shardy_ref.tools.simulate_cmd", (
        ("run FILE", "propagate, partition and run FILE on every device of its mesh"),),
        "run_main"),
    Command("check", "shardy_ref.tools.simulate_cmd", (
        ("check FILE", "run FILE partitioned and on one device; compare the results"),
        ("run|check --backend xla FILE", "the partitioned program run by XLA (jax extra)")),
        "check_main"),
    Command("fuzz", "shardy_ref.tools.fuzz_cmd", (
        ("fuzz", "check Shardy's invariants on random sharded programs"),)),
    Command("diff", "shardy_ref.tools.diff_cmd", (
        ("diff --tool CMD --pipeline PASSES", "random programs through ours and CMD"),)),
    Command("show", "shardy_ref.tools.show_cmd", (
        ("show FILE [--value NAME] [--svg OUT]", "draw meshes and who holds which block"),)),
    Command("explain", "shardy_ref.tools.explain_cmd", (
        ("explain FILE [--value NAME]", "why each value is sharded so; its collectives"),)),
)}


def usage_lines() -> str:
    """One line per synopsis of every command, descriptions aligned where they fit."""
    lines = []
    for command in COMMANDS.values():
        for synopsis, what in command.usage:
            left = f"    shardy-ref {synopsis}"
            lines.append(f"{left:<{COLUMN}}{what}" if len(left) < COLUMN else f"{left}   {what}")
    return "\n".join(lines)


def tool_command(name: str, *, says_error: bool = True, usage_status: int = 2):
    """Decorator of a command's ``main``: its :class:`ShardyRefError`, closed pipe or Ctrl-C
    reported and turned into the exit status. ``says_error``: ``shardy-ref NAME: error:``
    before a tool error's message, else ``shardy-ref NAME:`` (show, explain, diff and fuzz
    have always written it so); ``usage_status``: the command's status for a usage error
    (explain and diff exit 1 for every argument error, even argparse's)."""
    prefix = f"shardy-ref {name}: error: " if says_error else f"shardy-ref {name}: "

    def wrap(main):
        @functools.wraps(main)
        def run(*args, **kwargs) -> int:
            from shardy_ref.ir.diagnostics import ShardyRefError, ToolError, UsageError

            stderr = kwargs.get("stderr") or sys.stderr
            try:
                return main(*args, **kwargs)
            except ShardyRefError as e:
                stderr.write(f"{prefix}{e}\n" if isinstance(e, ToolError) else f"{e}\n")
                return usage_status if isinstance(e, UsageError) else e.exit_status
            except BrokenPipeError:
                return 1
            except KeyboardInterrupt:
                return 130
        return run
    return wrap
