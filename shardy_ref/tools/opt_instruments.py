"""The instrumentation behind ``shardy-ref-opt``'s debugging flags, written as mlir-opt
writes them to stderr (``mlir/lib/Pass/IRPrinting.cpp``, ``mlir/lib/Support/Timing.cpp``,
``mlir/lib/Pass/PassStatistics.cpp``):

- ``--mlir-print-ir-before-all`` / ``-after-all`` / ``-after-change`` / ``-after-failure``:
  the op a pass runs on, under ``// -----// IR Dump After NAME (ARG) ('OP' operation) //----- //``;
- ``--mlir-timing``: the execution time report (parsing, each pass, output);
- ``--mlir-pass-statistics``: the statistics report (our passes keep no counters, so each
  pass is listed without any).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from shardy_ref.pass_manager import Pass, PassInstrumentation


@dataclass
class IRPrinter(PassInstrumentation):
    """MLIR's ``IRPrinterInstrumentation``."""

    stream: object
    before: bool = False
    after: bool = False
    after_change: bool = False
    after_failure: bool = False
    print_flags: dict = field(default_factory=dict)  # print_module's keyword arguments
    _snapshots: dict = field(default_factory=dict)

    def run_before_pass(self, p: Pass, op) -> None:
        if self.before:
            self._dump(f"Before {_name(p)} ({p.NAME})", op)
        if self.after_change:
            from shardy_ref.ir.ir_snapshot import ir_snapshot
            self._snapshots[id(op)] = ir_snapshot(op)

    def run_after_pass(self, p: Pass, op) -> None:
        if self.after_change:
            from shardy_ref.ir.ir_snapshot import unchanged_since
            before = self._snapshots.pop(id(op), None)
            if before is not None and unchanged_since(before, op):
                return
        if self.after or self.after_change:
            self._dump(f"After {_name(p)} ({p.NAME})", op)

    def run_after_pass_failed(self, p: Pass, op) -> None:
        self._snapshots.pop(id(op), None)
        if self.after_failure:
            self._dump(f"After {_name(p)} Failed ({p.NAME})", op)

    def _dump(self, what: str, op) -> None:
        from shardy_ref.parser import print_module

        symbol = op.attributes.get("sym_name")
        name = f": @{symbol.value}" if symbol is not None and hasattr(symbol, "value") else ""
        self.stream.write(f"// -----// IR Dump {what} ('{op.name}' operation{name}) //----- //\n")
        self.stream.write(print_module(op, **self.print_flags).rstrip("\n") + "\n\n")


def _name(p: Pass) -> str:
    """MLIR's ``Pass::getName``: the pass's class name."""
    return type(p).__name__


@dataclass
class Timer(PassInstrumentation):
    """MLIR's ``PassTiming`` with the default list display: wall time per pass, summed over
    the ops it ran on, in first-run order, beside parsing and output."""

    rows: dict = field(default_factory=dict)
    _started: dict = field(default_factory=dict)

    def add(self, name: str, seconds: float) -> None:
        self.rows[name] = self.rows.get(name, 0.0) + seconds

    def run_before_pass(self, p: Pass, op) -> None:
        self.rows.setdefault(_name(p), 0.0)
        self._started[(id(p), id(op))] = time.perf_counter()

    def run_after_pass(self, p: Pass, op) -> None:
        start = self._started.pop((id(p), id(op)), None)
        if start is not None:
            self.add(_name(p), time.perf_counter() - start)

    run_after_pass_failed = run_after_pass

    def report(self) -> str:
        total = sum(self.rows.values())
        rule = "===" + "-" * 73 + "==="
        lines = [rule, " " * 25 + "... Execution time report ...", rule,
                 f"  Total Execution Time: {total:.4f} seconds", "",
                 "  ----Wall Time----  ----Name----"]
        for name, seconds in [*self.rows.items(), ("Total", total)]:
            share = 100.0 * seconds / total if total else 0.0
            lines.append(f"  {seconds:8.4f} ({share:5.1f}%)  {name}")
        return "\n".join(lines) + "\n"


@dataclass
class Statistics(PassInstrumentation):
    """MLIR's pass statistics report: every pass that ran (ours keep no statistics)."""

    ran: dict = field(default_factory=dict)

    def run_after_pass(self, p: Pass, op) -> None:
        self.ran.setdefault(_name(p), p.NAME)

    def report(self) -> str:
        rule = "===" + "-" * 73 + "==="
        lines = [rule, " " * 26 + "... Pass statistics report ...", rule]
        lines += [f"{name}" for name in self.ran]
        return "\n".join(lines) + "\n"


def instruments_for(opts, stream) -> dict[str, PassInstrumentation]:
    """The instrumentations ``opts`` (``shardy-ref-opt``'s flags) ask for, by role."""
    out: dict[str, PassInstrumentation] = {}
    if opts.print_ir:
        out["printer"] = IRPrinter(stream, before="before-all" in opts.print_ir,
                                   after="after-all" in opts.print_ir,
                                   after_change="after-change" in opts.print_ir,
                                   after_failure="after-failure" in opts.print_ir,
                                   print_flags=opts.print_flags())
    if opts.timing:
        out["timer"] = Timer()
    if opts.statistics:
        out["statistics"] = Statistics()
    return out


def report(instruments: dict[str, PassInstrumentation], stream) -> None:
    """The reports mlir-opt writes at the end of a run (statistics, then timing)."""
    for role in ("statistics", "timer"):
        if role in instruments:
            stream.write(instruments[role].report())
