"""XLA's partitioning in a child process, so that XLA aborting (a failed ``CHECK`` in its
C++ code, which ends the process with SIGABRT and a stack dump) is a located error of ours
and not the end of the caller.

:func:`partition_isolated` runs ``python -m shardy_ref.backends.xla_isolated`` with the
request as JSON on standard input; the child calls
:func:`~.xla_partitioner.partition_with_xla` and answers with JSON on standard output.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys

from shardy_ref.backends.hlo_sharding import parse_hlo_sharding
from shardy_ref.backends.jax_runtime import BackendError
from shardy_ref.backends.xla_partitioner import XlaPartitioned

_FIELDS = ("text", "hlo", "num_devices", "partitioner", "located", "before")


def partition_isolated(text: str, num_devices: int, *, partitioner: str = "shardy",
                       timeout: float = 600.0) -> XlaPartitioned:
    """:func:`~.xla_partitioner.partition_with_xla` in a child process; a crash of XLA
    there is a :class:`BackendError` quoting the end of what it printed."""
    request = json.dumps({"text": text, "num_devices": num_devices,
                          "partitioner": partitioner})
    try:
        child = subprocess.run([sys.executable, "-m", __name__], input=request,
                               capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise BackendError(None, f"XLA did not finish partitioning in {timeout:.0f} s") \
            from None
    if child.returncode != 0:
        raise BackendError(None, _failure(child.returncode, child.stderr))
    answer = json.loads(child.stdout)
    if "error" in answer:
        raise BackendError(None, answer["error"])
    return XlaPartitioned(**{k: answer[k] for k in _FIELDS},
                          arg_shardings=tuple(map(parse_hlo_sharding, answer["args"])),
                          result_shardings=tuple(map(parse_hlo_sharding, answer["results"])))


def _failure(status: int, stderr: str) -> str:
    """What to say when the child ended abnormally: the signal and XLA's last words."""
    if status < 0:
        try:
            how = f"was killed by {signal.Signals(-status).name}"
        except ValueError:
            how = f"was killed by signal {-status}"
    else:
        how = f"exited with status {status}"
    said = [line.strip() for line in stderr.splitlines()
            if line.strip() and not line.lstrip().startswith(("@", "***"))]
    last = "; ".join(said[-3:]) if said else "nothing on stderr"
    return f"XLA crashed while partitioning the module (the process {how}): {last}"


def _child() -> int:
    from shardy_ref.backends.xla_partitioner import partition_with_xla

    request = json.load(sys.stdin)
    try:
        result = partition_with_xla(request["text"], request["num_devices"],
                                    partitioner=request["partitioner"])
    except BackendError as e:
        json.dump({"error": e.message}, sys.stdout)
        return 0
    answer = {k: getattr(result, k) for k in _FIELDS}
    answer["args"] = [str(s) for s in result.arg_shardings]
    answer["results"] = [str(s) for s in result.result_shardings]
    json.dump(answer, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(_child())
