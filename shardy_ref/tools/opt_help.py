"""``shardy-ref-opt --help``: the flags, then every registered pass and pass pipeline with
its one-line description and its options, as ``mlir-opt --help`` lists them.

A pass's description is its ``DESCRIPTION`` if it has one, else the first sentence of its
class docstring; its options are its dataclass fields (upstream's option names, with ``-``
for ``_``), each with its type, its description (the field's ``metadata["help"]``, declared
where the option is) and its default.
"""
from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
import sys
from typing import NamedTuple

from shardy_ref.pass_manager import PASS_MODULES, PASSES, Pass, option_name

_TYPE_NAMES = {"bool": "<bool>", "int": "<int>", "str": "<string>",
               "tuple[str, ...]": "<string,...>"}


def load_all_passes() -> dict[str, type[Pass]]:
    """Import every pass module, so that each registered pass is in the registry."""
    for module in dict.fromkeys(PASS_MODULES.values()):
        importlib.import_module(module)
    return {name: PASSES[name] for name in sorted(PASS_MODULES) if name in PASSES}


def description(cls: type[Pass]) -> str:
    """``DESCRIPTION``, or the first sentence of the class docstring (on one line), or of
    its module's docstring when the class has none (a dataclass's is its signature)."""
    text = getattr(cls, "DESCRIPTION", "") or inspect.getdoc(cls) or ""
    if text.startswith(f"{cls.__name__}("):
        text = inspect.getdoc(sys.modules[cls.__module__]) or ""
    paragraph = " ".join(text.split("\n\n")[0].split())
    paragraph = re.sub(r"^``[^`]+``: (\w)", lambda m: m.group(1).upper(), paragraph)
    end = paragraph.find(". ")
    return paragraph if end < 0 else paragraph[:end + 1]


class PassOption(NamedTuple):
    """One option of a pass as ``--help`` shows it."""

    name: str  # upstream's spelling: the field's name with ``-`` for ``_``
    type: str  # ``<bool>``, ``<int>``, ``<string>``, ``<string,...>``
    default: str  # as the option's value is written; ``""`` when empty
    help: str  # the field's ``metadata["help"]``: one plain-text line, no final period


def pass_options(cls: type[Pass]) -> list[PassOption]:
    """A :class:`PassOption` per dataclass field of ``cls``."""
    if not dataclasses.is_dataclass(cls):
        return []
    out = []
    for f in dataclasses.fields(cls):
        type_name = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else "")
        out.append(PassOption(option_name(f.name),
                              _TYPE_NAMES.get(type_name, f"<{type_name}>"),
                              _show_default(default), f.metadata.get("help", "")))
    return out


def _show_default(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple | list):
        return ",".join(str(v) for v in value)
    return str(value)


def passes_help() -> str:
    """The pass section of ``--help``."""
    lines = ["Passes and pass pipelines (-NAME or -NAME=\"OPTION=VALUE ...\"):"]
    for name, cls in load_all_passes().items():
        kind = "pipeline" if hasattr(cls, "elements") else "pass"
        text = (description(cls) or kind).replace("``", "'")  # plain text, not RST
        lines.append(f"  -{name:<50} - {text}")
        for option in pass_options(cls):
            shown = option.default or '""'
            text = f"{option.help} (default: {shown})".replace("``", "'") if option.help \
                else f"default: {shown}"
            lines.append(f"      -{option.name + '=' + option.type:<47} - {text}")
    return "\n".join(lines)
