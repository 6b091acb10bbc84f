"""``docs/tutorial.md`` runs as written: every ```` ```console ```` block's ``$ `` lines are
commands (run from the repository root with our tools on ``PATH``), and the lines after
each, up to the next ``$ `` or the fence, are its exact output (stdout and stderr; trailing
whitespace ignored). ``python -m tests.test_tutorial --update`` rewrites those outputs
from real runs; outputs are never edited by hand."""
from __future__ import annotations

import dataclasses
import difflib
import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "tutorial.md"
TOOLS = ("shardy-ref-opt", "shardy-ref", "shardy-ref-translate", "cat")
MIN_COMMANDS = 30
FENCE = re.compile(r"^```console\n(.*?)^```$", re.S | re.M)


@dataclasses.dataclass(frozen=True, slots=True)
class Step:
    """One command of the doc, the line it is on (1-based) and the output the doc expects."""

    command: str
    line: int
    expected: tuple[str, ...]
    span: tuple[int, int]  # character offsets of the expected output in the doc


def steps(text: str) -> list[Step]:
    """Every command of every console block of ``text``, in order."""
    found = []
    for block in FENCE.finditer(text):
        offset = block.start(1)
        lines = block.group(1).splitlines(keepends=True)
        i = 0
        while i < len(lines):
            lineno = text.count("\n", 0, offset) + 1
            if not lines[i].startswith("$ "):
                raise ValueError(f"line {lineno}: output without a command: {lines[i]!r}")
            start = offset + len(lines[i])
            j = i + 1
            while j < len(lines) and not lines[j].startswith("$ "):
                j += 1
            end = start + sum(map(len, lines[i + 1:j]))
            found.append(Step(lines[i][2:].strip(), lineno,
                              tuple(s.rstrip("\n") for s in lines[i + 1:j]), (start, end)))
            offset = end
            i = j
    return found


def normalize(lines) -> list[str]:
    """Trailing whitespace of each line and trailing blank lines dropped."""
    out = [line.rstrip() for line in lines]
    while out and not out[-1]:
        out.pop()
    return out


def environment() -> dict[str, str]:
    """This tree's tools first on ``PATH`` (the worktree's ``.bin`` wrappers when present,
    else the scripts installed next to this Python), and a fixed, non-terminal setting."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "SHARDY_REF_DEBUG")}
    dirs = [str(ROOT / ".bin")] if (ROOT / ".bin").is_dir() else []
    dirs.append(str(Path(sys.executable).parent))
    env["PATH"] = os.pathsep.join([*dirs, env.get("PATH", "")])
    env.update(PYTHONUNBUFFERED="1", OPENBLAS_NUM_THREADS="1", TERM="dumb")
    return env


def check_tools(command: str) -> None:
    """Only our command-line tools (and ``cat``) may appear in the doc, alone or piped, and
    ``python`` running one of the tutorial's own scripts."""
    for part in command.split("|"):
        words = shlex.split(part)
        if words[:1] == ["python"] and len(words) == 2 and \
                re.fullmatch(r"docs/tutorial/\w+\.py", words[1]):
            continue
        if not words or words[0] not in TOOLS:
            raise ValueError(f"not one of {TOOLS}: {part.strip()!r}")


def run(command: str) -> list[str]:
    """The command's stdout and stderr as the doc shows them."""
    check_tools(command)
    proc = subprocess.run(command, shell=True, cwd=ROOT, env=environment(), timeout=60,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return normalize(proc.stdout.splitlines())


def diff(step: Step, actual: list[str]) -> str:
    """A unified diff of the doc's output against the real one ("" when they agree)."""
    return "\n".join(difflib.unified_diff(normalize(step.expected), actual, "docs/tutorial.md",
                                          f"$ {step.command}", lineterm=""))


def run_all(all_steps: list[Step]) -> list[list[str]]:
    """Every step's real output, on as many threads as there are cores."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return list(pool.map(lambda s: run(s.command), all_steps))


STEPS = steps(DOC.read_text()) if DOC.exists() else []


def test_the_tutorial_has_commands():
    assert len(STEPS) >= MIN_COMMANDS, f"only {len(STEPS)} commands in {DOC}"
    for step in STEPS:
        check_tools(step.command)


@pytest.mark.parametrize("index", range(len(STEPS)),
                         ids=[f"line{s.line}" for s in STEPS])
def test_command_output_matches_the_doc(index):
    """Each command runs in its own test (a shared fixture of all outputs would run every
    command once per pytest-xdist worker)."""
    step = STEPS[index]
    problem = diff(step, run(step.command))
    assert not problem, (f"docs/tutorial.md:{step.line}: `{step.command}` printed something "
                         f"else (python -m tests.test_tutorial --update rewrites it):\n{problem}")


def test_a_changed_output_is_caught():
    step = STEPS[0]
    outputs = [run(step.command)]
    last = step.expected[-1]
    mutated = dataclasses.replace(step, expected=(*step.expected[:-1], last + " x"))
    assert diff(step, outputs[0]) == ""
    lines = diff(mutated, outputs[0]).splitlines()
    assert f"-{last} x" in lines and f"+{last}" in lines
    dropped = dataclasses.replace(step, expected=step.expected[:-1])
    assert f"+{last}" in diff(dropped, outputs[0]).splitlines()


def test_the_extractor_splits_commands_and_outputs():
    text = "x\n```console\n$ shardy-ref a\none\n\ntwo\n$ cat b\n```\n```sh\n$ no\n```\n"
    found = steps(text)
    assert [(s.command, s.expected, s.line) for s in found] == [
        ("shardy-ref a", ("one", "", "two"), 3), ("cat b", (), 7)]
    assert text[found[0].span[0]:found[0].span[1]] == "one\n\ntwo\n"
    with pytest.raises(ValueError, match="not one of"):
        check_tools("rm -rf x")
    with pytest.raises(ValueError, match="not one of"):
        check_tools("shardy-ref-opt x | sh")
    check_tools("python docs/tutorial/from_jax.py")
    with pytest.raises(ValueError, match="not one of"):
        check_tools("python -c 'import os'")


def update(path: Path = DOC) -> int:
    """Rewrite every expected output of ``path`` from a real run; the number changed."""
    text = path.read_text()
    all_steps = steps(text)
    changed = 0
    for step, actual in reversed(list(zip(all_steps, run_all(all_steps), strict=True))):
        if normalize(step.expected) != actual:
            changed += 1
        body = "".join(line + "\n" for line in actual)
        text = text[:step.span[0]] + body + text[step.span[1]:]
    path.write_text(text)
    return changed


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python -m tests.test_tutorial --update")
    print(f"{DOC.relative_to(ROOT)}: {update()} of {len(steps(DOC.read_text()))} outputs rewritten")
