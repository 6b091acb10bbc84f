#!/usr/bin/env python3
"""Print fidelity: does ``shardy-ref-opt CHUNK`` (no passes) print what real Shardy prints?

For every chunk of every corpus file that the oracle (jaxlib's Shardy, see
``../shared/oracle``) accepts, compare our printed text with the oracle's, byte for byte.
Oracle outputs are cached under ``.cache/oracle``. Prints the percentage and the first
differing line of each mismatch; ``--json`` writes every result.

    python tools/print_fidelity.py [PATTERN ...] [--generic] [--show N] [--json OUT]
                                   [--subprocess]
"""
from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus


def ours_in_process(text: str, unregistered: bool, generic: bool) -> tuple[bool, str, str]:
    from shardy_ref.tools.opt import Options, run

    opts = Options(allow_unregistered=unregistered, generic=generic)
    out, err = io.StringIO(), io.StringIO()
    status = run(opts, stdin=io.StringIO(text), stdout=out, stderr=err)
    return status == 0, out.getvalue(), err.getvalue()


def ours_subprocess(text: str, unregistered: bool, generic: bool) -> tuple[bool, str, str]:
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    args = ["shardy-ref-opt", f.name] + (["-allow-unregistered-dialect"] if unregistered else []) \
        + (["-mlir-print-op-generic"] if generic else [])
    proc = subprocess.run(args, capture_output=True, text=True)
    Path(f.name).unlink()
    return proc.returncode == 0, proc.stdout, proc.stderr


def first_difference(a: str, b: str) -> str:
    la, lb = a.split("\n"), b.split("\n")
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {i + 1}:\n    oracle: {x[:300]}\n    ours:   {y[:300]}"
    return f"length differs: oracle {len(la)} lines, ours {len(lb)} lines"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("patterns", nargs="*")
    ap.add_argument("--generic", action="store_true", help="compare -mlir-print-op-generic output")
    ap.add_argument("--show", type=int, default=20, help="mismatches to show")
    ap.add_argument("--json")
    ap.add_argument("--subprocess", action="store_true", help="run the installed command")
    args = ap.parse_args(argv)
    if not corpus.oracle_available():
        print("oracle venv not found; run ../shared/oracle/setup", file=sys.stderr)
        return 2
    chunks = corpus.corpus_chunks(args.patterns or None)
    oracle = corpus.oracle_print([(c.text, c.unregistered) for c in chunks], generic=args.generic)
    ours_fn = ours_subprocess if args.subprocess else ours_in_process
    accepted = same = 0
    rows, shown = [], 0
    for chunk, ref in zip(chunks, oracle):
        if not ref["ok"]:
            continue
        accepted += 1
        ok, out, err = ours_fn(chunk.text, chunk.unregistered, args.generic)
        match = ok and out == ref["out"]
        same += match
        rows.append({"chunk": chunk.id, "match": match, "ok": ok,
                     "error": err.strip().split("\n")[0] if not ok else ""})
        if not match and shown < args.show:
            shown += 1
            why = err.strip().split("\n")[0] if not ok else first_difference(ref["out"], out)
            print(f"MISMATCH {chunk.id} (line {chunk.start_line}): {why}")
    pct = 100.0 * same / accepted if accepted else 0.0
    print(f"print fidelity: {same}/{accepted} oracle-accepted chunks identical ({pct:.1f}%); "
          f"{len(chunks) - accepted} chunks rejected by the oracle are not scored")
    if args.json:
        Path(args.json).write_text(json.dumps({"same": same, "accepted": accepted,
                                               "percent": pct, "chunks": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
