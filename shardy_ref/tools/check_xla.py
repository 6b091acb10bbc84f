"""``shardy-ref check --partitioner xla``: XLA partitions the module, our simulator runs
XLA's per-device program on every device and judges it against the single-device run
(:func:`shardy_ref.backends.xla_check.check_partitioned`). XLA partitions in a child
process (:mod:`shardy_ref.backends.xla_isolated`): XLA aborting on a module is an error
line, not the end of this command.

The report lists how XLA laid out the entry function's arguments and results (HLO
sharding strings), the collectives of XLA's per-device program, each output's largest
error and the devices holding wrong elements, and the time of each phase; exit 1 on a
mismatch. ``--save-hlo DIR`` keeps XLA's program: ``DIR/NAME.after_spmd.hlo`` (XLA's HLO
text) and ``DIR/NAME.per_device.mlir`` (the StableHLO our interpreter ran).
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from shardy_ref.ir.diagnostics import ToolError
from shardy_ref.tools.simulate_cmd import format_devices


def check_with_xla(opts, module, text: str, filename: str, arrays: list, progress) -> int:
    """Run the check for the parsed ``module`` (its ``text``) on the global ``arrays``."""
    from shardy_ref.backends.xla_check import check_partitioned
    from shardy_ref.backends.xla_isolated import partition_isolated

    n = device_count(module)
    start = time.perf_counter()
    with progress.phase(f"partitioning for {n} devices with XLA ({opts.xla_partitioner})"):
        partitioned = partition_isolated(text, n, partitioner=opts.xla_partitioner)
    xla_seconds = time.perf_counter() - start
    if opts.save_hlo:
        save_hlo(opts.save_hlo, filename, partitioned)
    with progress.phase(f"running XLA's program on {n} devices and on one device"):
        report = check_partitioned(text, *arrays, num_devices=n, function=opts.function,
                                   rtol=opts.rtol, atol=opts.atol, partitioned=partitioned)
    report.seconds["partition"] = xla_seconds
    progress.stop()
    print(describe(report, filename))
    print("OK: XLA's partitioned program computes the same results" if report.ok else
          "MISMATCH: XLA's partitioned program differs from the single-device run")
    return 0 if report.ok else 1


def describe(report, filename: str) -> str:
    p = report.partitioned
    lines = [f"{filename}: partitioned by XLA ({p.partitioner}) for {p.num_devices} devices"]
    for kind, shardings in (("argument", p.arg_shardings), ("result", p.result_shardings)):
        lines += [f"  {kind} {i}: {s}" for i, s in enumerate(shardings)]
    used = ", ".join(f"{name} x{count}" for name, count in sorted(p.collectives().items()))
    lines.append(f"  XLA's per-device program: collectives {used or 'none'}")
    for out in report.outputs:
        bad = "" if out.same else "; devices with wrong elements: " + \
            format_devices(list(out.wrong_devices))
        lines.append(f"  out{out.index}: {out.line}{bad}")
    first = report.first_wrong
    if first is not None:
        lines.append(f"  first wrong value: {first.op}, XLA's {first.xla_name} sharded "
                     f"{first.sharding}: {first.line}; devices with wrong elements: "
                     f"{format_devices(list(first.wrong_devices))}")
    elif not report.ok:
        lines.append("  first wrong value: not located (no op of XLA's program could be "
                     "paired with a value of the global program)")
    seconds = report.seconds
    lines.append(f"  time: XLA {seconds['partition']:.2f} s, one device "
                 f"{seconds['single']:.2f} s, {p.num_devices} devices "
                 f"{seconds['devices']:.2f} s")
    return "\n".join(lines)


def device_count(module) -> int:
    """How many devices the module is partitioned for: its ``mhlo.num_partitions``, else
    the devices of its first ``sdy.mesh``."""
    attr = module.attributes.get("mhlo.num_partitions")
    if attr is not None and hasattr(attr, "value"):
        return int(attr.value)
    for op in module.regions[0].blocks[0]:
        if op.name == "sdy.mesh":
            return max(1, op.attributes["mesh"].total_size)
    raise ToolError("the module has no sdy.mesh and no mhlo.num_partitions: nothing says "
                    "how many devices XLA should partition it for")


def save_hlo(directory: str, filename: str, partitioned) -> None:
    """XLA's HLO after partitioning and the StableHLO our interpreter runs, in
    ``directory`` (created if missing)."""
    stem = Path(filename).stem if filename not in ("-", "<stdin>") else "stdin"
    try:
        os.makedirs(directory, exist_ok=True)
        Path(directory, f"{stem}.after_spmd.hlo").write_text(partitioned.hlo)
        Path(directory, f"{stem}.per_device.mlir").write_text(partitioned.text)
    except OSError as e:
        raise ToolError(f"cannot write to {directory}: {e.strerror}") from None
