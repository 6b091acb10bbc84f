"""``shardy-ref explain MODULE [--value NAME]``: why each value of the main function is
sharded as it is, and what partitioning does with it.

For every value (function arguments, op results, function results), or the one ``--value``
names (``%3``, ``arg0``, ``result0``, a source name such as ``%h``, or a ``loc("name")``):
its sharding after ``sdy-propagation-pipeline``, where each axis came from (a user input or
output sharding, a sharding constraint, and which op moved it along which factor, at which
step of which strategy and priority round), and the collectives partitioning inserts for
it with the bytes each device sends (:mod:`shardy_ref.tools.explain`). Errors are
``file:line:col: error: message``, exit 1.
"""
from __future__ import annotations

import argparse
import sys

from shardy_ref.ir.diagnostics import ToolError
from shardy_ref.tools.command import tool_command
from shardy_ref.tools.explain import ValueReport, explain_module, find_value
from shardy_ref.tools.simulate_cmd import read_module_file


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        self.exit(1, f"shardy-ref explain: {message}\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="shardy-ref explain", description=__doc__.split("\n\n")[1])
    p.add_argument("module", help="the MLIR file (- for stdin)")
    p.add_argument("--value", help="only this value: %%3, arg0, result0, %%name or loc name")
    return p


def main(argv: list[str], stdout=None, stderr=None) -> int:
    return _main(argv, stdout or sys.stdout, stderr=stderr or sys.stderr)


@tool_command("explain", says_error=False)
def _main(argv: list[str], stdout, *, stderr) -> int:
    args = _parser().parse_args(argv)
    text, filename = read_module_file(args.module)
    explanation = explain_module(text, filename)
    reports = explanation.values
    if args.value is not None:
        reports = find_value(reports, args.value)
        if not reports:
            raise ToolError(f"no value named {args.value}")
    steps = (f" (steps by {', '.join(explanation.propagated_by)})"
             if explanation.propagated_by else "")
    header = f"@{explanation.function}: after sdy-propagation-pipeline{steps}, then partitioned"
    stdout.write("\n\n".join([header, *(render(r) for r in reports)]) + "\n")
    return 0


def render(report: ValueReport) -> str:
    """The text block for one value."""
    aliases = f" ({', '.join(report.aliases)})" if report.aliases else ""
    what = report.op or report.kind
    lines = [f"{report.name}{aliases}: {what} : {report.type}"]
    lines.append(f"  sharding: {report.sharding or 'none (replicated)'}")
    for story in report.axes:
        lines.append(f"  axis {story.axis} on dim {story.dim}: from {story.origin}")
        lines.extend(f"    {move}" for move in story.moves)
    if report.partitioned_as:
        lines.append(f"  partitioning computes it as {report.partitioned_as}")
    if report.note:
        lines.append(f"  note: {report.note}")
    if not report.collectives:
        lines.append("  partitioning: no collectives")
    else:
        total = sum(c.bytes_per_device for c in report.collectives)
        lines.append(f"  partitioning: {len(report.collectives)} collective(s), "
                     f"{total} bytes sent per device")
        for c in report.collectives:
            used = f", then {c.consumer}" if c.consumer else ""
            lines.append(f"    {c.summary}: group of {c.group_size}, "
                         f"{c.bytes_per_device} bytes per device{used}")
            lines.append(f"      {c.text}")
    return "\n".join(lines)
