"""``shardy-ref show MODULE [--value NAME] [--svg OUT]``: pictures of meshes and shardings.

Each mesh is drawn as its device grid (``device_ids`` order, maximal meshes); a value's
sharding as a grid of the blocks of its two most sharded dimensions, each cell naming the
devices holding that block (the other sharded dimensions' blocks listed inside the
cell), with the element ranges, padding of non-divisible dimensions, replicated,
sub-axes, open dimensions and unreduced axes spelled out. Without ``--value``: every
argument and result of the entry function in full, and one line per sharded op result.
The block layout is :mod:`shardy_ref.ir.sharding_layout`; rich is imported only here.
Errors are ``file:line:col: error: message`` (exit 1).
"""
from __future__ import annotations

import argparse
import colorsys
import dataclasses
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from shardy_ref.ir.diagnostics import ToolError
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.sharding_layout import Layout, dim_axes, layout
from shardy_ref.tools.arg_types import positive_int
from shardy_ref.tools.command import tool_command
from shardy_ref.tools.simulate_cmd import read_module_file


def _palette() -> tuple[str, ...]:
    """64 distinct cell styles: 16 hues by 4 lightness levels, ordered so consecutive cells
    differ in both (cell i: hue 7i mod 16, lightness (i + i // 16) mod 4, a bijection), with
    black or white text, whichever reads better on the colour."""
    styles = []
    for i in range(64):
        hue = (7 * i) % 16 / 16
        light = (0.25, 0.42, 0.59, 0.76)[(i + i // 16) % 4]
        r, g, b = (round(255 * c) for c in colorsys.hls_to_rgb(hue, light, 0.9))
        text = "black" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "white"
        styles.append(f"{text} on #{r:02x}{g:02x}{b:02x}")
    return tuple(styles)


# One colour per shard (or device), distinct for up to 64, then repeating; rich lowers
# them to the nearest colours a terminal has.
PALETTE = _palette()


@dataclass(frozen=True, slots=True)
class ShownValue:
    """One value to draw: how it is named, its type and sharding and the mesh it uses."""

    name: str  # "%arg0", "result0", "%3"
    kind: str  # "argument", "result", "op result"
    type: object
    sharding: TensorSharding | None
    mesh: Mesh | None
    mesh_name: str | None
    op_name: str = ""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="shardy-ref show", description=(
        "Draw the meshes of MODULE and which device holds which block of its values"))
    p.add_argument("module", help="an MLIR file with sdy shardings (- for stdin)")
    p.add_argument("--value", metavar="NAME", help="one value: %%3, arg0, result0 or a "
                   'loc("name") name (default: the entry function\'s arguments and results)')
    p.add_argument("--svg", metavar="OUT", help="also write the picture as SVG to OUT")
    p.add_argument("--function", default=None,
                   help="the entry function (default: @main, else the module's only one)")
    p.add_argument("--width", type=positive_int, default=None,
                   help="columns (default: the terminal's, 120 when not a terminal)")
    return p


@tool_command("show", says_error=False)
def main(argv: list[str]) -> int:
    opts = _parser().parse_args(argv)
    text, filename = read_module_file(opts.module)
    return show(opts, text, filename)


def show(opts, text: str, filename: str) -> int:
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_module

    if opts.svg:
        _check_writable(opts.svg)
    module = parse_module(text, filename)
    verify_module(module)
    meshes = _meshes(module)
    values = collect_values(module, opts.function, meshes)
    console = _console(opts)
    if opts.value is not None:
        chosen = find_value(values, opts.value, text, module, opts.function)
        console.print(tensor_picture(chosen))
    else:
        for name, mesh in meshes.items():
            console.print(mesh_picture(name, mesh))
        brief = [v for v in values if v.kind == "op result"]
        for v in values:
            if v.kind != "op result":
                console.print(tensor_picture(v))
        if brief:
            console.print(brief_table(brief))
    if opts.svg:
        from shardy_ref.tools.source import replace_file

        svg = console.export_svg(title=f"shardy-ref show {Path(filename).name}")
        try:
            replace_file(opts.svg, svg.encode("utf-8"))
        except OSError as e:
            raise ToolError(f"cannot write {opts.svg}: {e.strerror}") from None
    return 0


def _check_writable(path: str) -> None:
    """Refuse an ``--svg`` path that cannot be written before drawing anything."""
    import os

    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ToolError(f"cannot write {path}: Is a directory")
    if not os.path.isdir(parent):
        raise ToolError(f"cannot write {path}: No such file or directory")
    if not os.access(parent, os.W_OK) or (os.path.exists(path) and
                                          not os.access(path, os.W_OK)):
        raise ToolError(f"cannot write {path}: Permission denied")


def _console(opts):
    if importlib.util.find_spec("rich") is None:
        raise ToolError("drawing needs rich: pip install 'shardy-ref[testing]' "
                        "(or pip install rich)")
    from rich.console import Console

    width = opts.width
    if width is None and not sys.stdout.isatty():
        width = 120
    return Console(file=sys.stdout, record=bool(opts.svg), width=width, highlight=False)


# -- which values ---------------------------------------------------------------------------
def _meshes(module) -> dict[str, Mesh]:
    from shardy_ref.ir.sharding_walker import mesh_ops
    from shardy_ref.ir.symbols import symbol_name

    return {symbol_name(op): op.attributes["mesh"] for op in mesh_ops(module)}


def _mesh_of(sharding: TensorSharding | None, meshes: dict[str, Mesh]):
    if sharding is None:
        return None, None
    if isinstance(sharding.mesh_or_ref, Mesh):
        return sharding.mesh_or_ref, None
    return meshes.get(sharding.mesh_or_ref), sharding.mesh_or_ref


def _entry(module, function: str | None):
    """The function named ``function``; by default ``@main``, else the only function
    (:func:`~shardy_ref.ir.utils.entry_function`), or an error listing the functions."""
    from shardy_ref.ir.diagnostics import EntryFunctionError
    from shardy_ref.ir.symbols import symbol_name
    from shardy_ref.ir.utils import entry_function

    try:
        return entry_function(module, function)
    except EntryFunctionError:
        known = ", ".join(f"@{symbol_name(op)}" for op in module.regions[0].blocks[0]
                          if op.name == "func.func") or "none"
        raise EntryFunctionError(module.location, f"no function @{function or 'main'} in the "
                                 f"module (functions: {known})") from None


def collect_values(module, function: str | None, meshes: dict[str, Mesh]) -> list[ShownValue]:
    """The entry function's arguments, results and sharded op results, in order."""
    from shardy_ref.ir.func_attrs import function_type
    from shardy_ref.ir.value_sharding import get_func_result_sharding, get_sharding
    from shardy_ref.parser.names import NameState

    func = _entry(module, function)
    names = NameState(module)
    out = []
    for arg in func.regions[0].blocks[0].args:
        s = get_sharding(arg)
        out.append(ShownValue(names.use(arg), "argument", arg.type, s, *_mesh_of(s, meshes)))
    for i, t in enumerate(function_type(func).results):
        s = get_func_result_sharding(func, i)
        out.append(ShownValue(f"result{i}", "result", t, s, *_mesh_of(s, meshes)))
    for op in func.walk():
        if op is func:
            continue
        for r in op.results:
            s = get_sharding(r)
            if s is not None:
                out.append(ShownValue(names.use(r), "op result", r.type, s,
                                      *_mesh_of(s, meshes), op_name=op.name))
        out.extend(_in_shardings(op, names, meshes))
    return out


def _in_shardings(op, names, meshes) -> list[ShownValue]:
    """A named or manual computation's in-shardings, each on its (global) operand: how
    the operand is laid out as the computation takes it."""
    from shardy_ref.ir.value_sharding import DATA_FLOW_OPS

    flow = DATA_FLOW_OPS.get(op.name)
    attr = op.attributes.get(flow.block_arg_shardings) if flow is not None and \
        flow.block_arg_shardings else None
    if attr is None:
        return []
    owner = names.use(op.results[0]) if op.results else op.name
    return [ShownValue(names.use(operand), "op result", operand.type, s,
                       *_mesh_of(s, meshes), op_name=f"in_shardings[{i}] of {owner}")
            for i, (operand, s) in enumerate(zip(op.operands, attr, strict=False))]


def find_value(values: list[ShownValue], name: str, text: str, module,
               function: str | None) -> ShownValue:
    """``%3``, ``arg0``/``%arg0``, ``result0`` or a ``loc("name")`` name."""
    wanted = name if name.startswith("%") or name.startswith("result") else "%" + name
    for v in values:
        if v.name == wanted:
            return v
    target = _source_name(text, name.lstrip("%"), module, function) \
        or _loc_value(text, name, module, function)
    if target is not None:
        for v in values:
            if v.name == target:
                return dataclasses.replace(v, name=f"{v.name} ({name})")
    raise ToolError(f"no value named {name}")


def _source_name(text: str, name: str, module, function: str | None) -> str | None:
    """The printed name of the value spelled ``%name`` in the source: an argument of the
    entry function's signature or the (first) result of an op (``%h = ...``)."""
    from shardy_ref.parser.names import NameState

    func = _entry(module, function)
    args = _signature_args(text, func)
    if name in args:
        return f"%arg{args.index(name)}"
    lines = text.splitlines()
    for (line, col), op in _op_starts(func):
        before = lines[line - 1][:col - 1] if line <= len(lines) else ""
        m = re.search(r"%([\w$.-]+)(?::\d+)?\s*=\s*$", before)
        if m and m.group(1) == name and op.results:
            return NameState(module).use(op.results[0])
    return None


def _signature_args(text: str, func) -> list[str]:
    """The source names of ``func``'s arguments, read from its signature's text."""
    line = func.location.line
    if not func.location.is_known:
        return []
    start = sum(len(x) + 1 for x in text.split("\n")[:line - 1]) + func.location.col - 1
    open_at = text.find("(", start)
    depth, i = 0, open_at
    while 0 <= i < len(text):
        ch = text[i]
        if ch == '"':
            i = text.find('"', i + 1) if text.find('"', i + 1) >= 0 else len(text)
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>" and not (ch == ">" and text[i - 1] == "-"):
            depth -= 1
            if depth == 0:
                break
        i += 1
    sig = text[open_at:i]
    return re.findall(r"%([\w$.-]+)\s*:", sig)


_LOC_ALIAS = re.compile(r'^(#loc\w*)\s*=\s*loc\("((?:[^"\\]|\\.)*)"', re.M)
_LOC_USE = re.compile(r'loc\((?:"((?:[^"\\]|\\.)*)"|(#loc\w*))')


def _loc_value(text: str, name: str, module, function: str | None) -> str | None:
    """The printed name of the value whose trailing ``loc(...)`` is named ``name``: an op
    result (the last op starting on the line before the ``loc``) or a function argument
    (the last ``%name:`` before it on the signature's line)."""
    from shardy_ref.parser.names import NameState

    aliases = {m.group(1): m.group(2) for m in _LOC_ALIAS.finditer(text)}
    starts = _op_starts(_entry(module, function))
    names = None
    for m in _LOC_USE.finditer(text):
        label = m.group(1) if m.group(1) is not None else aliases.get(m.group(2))
        if label != name and not (label or "").startswith(name + "("):
            continue
        line = text.count("\n", 0, m.start()) + 1
        col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        before = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
        ops = [op for (ln, c), op in starts if ln == line and c < col]
        if ops and ops[-1].results:
            names = names or NameState(module)
            return names.use(ops[-1].results[0])
        args = re.findall(r"%([\w$.-]+)\s*:", before)
        signature = _signature_args(text, _entry(module, function))
        if args and args[-1] in signature:
            return f"%arg{signature.index(args[-1])}"
    return None


def _op_starts(func) -> list:
    """((line, col), op) of every op under ``func``, in source order."""
    return [((op.location.line, op.location.col), op) for op in func.walk()
            if op is not func and op.location.is_known]


# -- pictures -------------------------------------------------------------------------------
def mesh_picture(name: str, mesh: Mesh):
    """A mesh's axes and its device grid: rows over every axis but the last, columns over
    the last; each cell the device id at that position of the ``device_ids`` order."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    title = f"mesh @{name} = {mesh}"
    if mesh.is_maximal:
        return Panel(Text(f"maximal mesh: the single device {mesh.maximal_device_id}"),
                     title=title, expand=False)
    if not mesh.axes:
        return Panel(Text("empty mesh: no axes, 1 device (0)"), title=title, expand=False)
    *outer, last = mesh.axes
    axes = " x ".join(f'"{a.name}"={a.size}' for a in mesh.axes)
    order = " (device_ids order)" if mesh.device_ids else ""
    table = Table(show_lines=True)
    table.add_column(", ".join(f'"{a.name}"' for a in outer) or "", style="bold")
    for c in range(last.size):
        table.add_column(f'"{last.name}"={c}', justify="center")
    ids = mesh.device_ids or tuple(range(mesh.total_size))
    for row in range(mesh.total_size // last.size):
        label = ", ".join(f"{a.name}={c}" for a, c in zip(outer, _coords(outer, row),
                                                             strict=True))
        cells = [Text(str(ids[row * last.size + c]), style=PALETTE[(row * last.size + c)
                                                                  % len(PALETTE)])
                 for c in range(last.size)]
        table.add_row(label, *cells)
    return Panel(Group(Text(f"{mesh.total_size} devices: {axes}{order}"), table),
                 title=title, expand=False)


def _coords(axes, position: int) -> list[int]:
    out = []
    for a in reversed(axes):
        position, c = divmod(position, a.size)
        out.append(c)
    return out[::-1]


def tensor_picture(v: ShownValue):
    """A value's header, the description of each dimension and its block grid."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.text import Text

    title = f"{v.name}: {v.type}"
    shape = _static_shape(v.type)
    if v.sharding is None:
        return Panel(Text("no sharding: every device holds the whole tensor"),
                     title=title, expand=False)
    if v.mesh is None:
        return Panel(Text(f"sharding {v.sharding}: mesh @{v.mesh_name} not found"),
                     title=title, expand=False)
    head = Text(f"#sdy.sharding{v.sharding.params()}\non mesh "
                f"{'@' + v.mesh_name + ' = ' if v.mesh_name else ''}{v.mesh}")
    if shape is None:
        return Panel(Group(head, Text("not a statically shaped tensor: no block layout")),
                     title=title, expand=False)
    lay = layout(shape, v.sharding, v.mesh)
    return Panel(Group(head, Text("\n".join(describe(lay))), block_grid(lay)),
                 title=title, expand=False)


def _static_shape(t) -> tuple[int, ...] | None:
    shape = getattr(t, "shape", None)
    if shape is None or any(d is None for d in shape):
        return None
    return tuple(shape)


def describe(lay: Layout) -> list[str]:
    """One line per dimension (its axes, blocks, padding, open/closed), then the local
    shape, replication and unreduced axes."""
    mesh, s = lay.mesh, lay.sharding
    axes = dim_axes(s, mesh, len(lay.shape))
    lines = []
    for d, (size, count, local) in enumerate(zip(lay.shape, lay.counts, lay.local_shape,
                                                 strict=True)):
        dim = s.dim_shardings[d] if s.dim_shardings else None
        flags = "" if dim is None else (" (open)" if not dim.is_closed else " (closed)")
        if dim is not None and dim.priority is not None:
            flags += f" priority p{dim.priority}"
        if count == 1:
            lines.append(f"dim {d}: {size}, not sharded{flags}")
            continue
        by = ", ".join(f"{ref.params()} ({ref.size(mesh)})" for ref in axes[d])
        line = f"dim {d}: {size} over {by} -> {count} blocks of {local}{flags}"
        if size % count:
            short = size - local * (count - 1)
            line += (f"; not divisible: padded to {local * count}, the last block holds "
                     f"{max(short, 0)}" if short > 0 else
                     f"; not divisible: padded to {local * count}")
        lines.append(line)
    shape = "x".join(map(str, lay.local_shape)) or "scalar"
    lines.append(f"local shape {shape} on each of {_plural(len(lay.blocks), 'device')}; "
                 f"{_plural(lay.num_blocks, 'distinct block')}, each held by "
                 f"{_plural(lay.replication, 'device')}")
    lines.extend(_replication_lines(lay))
    return lines


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _replication_lines(lay: Layout) -> list[str]:
    s = lay.sharding
    out = []
    if s.replicated_axes:
        out.append("replicated (explicitly) along " + _axis_list(s.replicated_axes))
    if s.unreduced_axes:
        out.append(f"unreduced along {_axis_list(s.unreduced_axes)}: devices along them "
                   f"hold partial values still to be combined by {s.reduction_op.name.lower()}")
    free = lay.unused_axes(also_used=(*s.replicated_axes, *s.unreduced_axes))
    if free:
        out.append("replicated along " + ", ".join(a.params() for a in free)
                   + " (axes no dimension uses)")
    return out


def _axis_list(refs) -> str:
    return "{" + ", ".join(r.params() for r in refs) + "}"


def grid_dims(lay: Layout) -> tuple[int | None, int | None]:
    """The dims drawn as rows and columns: the two with the most blocks (ties: the
    lower dim; unsharded dims only to fill), in dimension order."""
    ranked = sorted(range(len(lay.shape)), key=lambda d: (-lay.counts[d], d))[:2]
    ranked.sort()
    return (ranked[0] if ranked else None, ranked[1] if len(ranked) > 1 else None)


def range_text(start: int, stop: int, padding: int) -> str:
    pad = f" +{padding} pad" if padding else ""
    return f"{start}:{stop}{pad}"


def ids_text(ids: list[int]) -> str:
    """Device ids, consecutive runs written ``a-b``: ``0-3, 8``."""
    parts, i = [], 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        parts.append(str(ids[i]) if j - i < 2 else f"{ids[i]}-{ids[j]}")
        if j - i == 1:
            parts.append(str(ids[j]))
        i = j + 1
    return ", ".join(parts)


def block_grid(lay: Layout):
    """The blocks of the grid dims as a table (the corner names them: ``dim 0 \\ dim 1``
    is rows \\ columns); the other sharded dims inside each cell."""
    from rich.table import Table
    from rich.text import Text

    row, col = grid_dims(lay)
    folded = [d for d in range(len(lay.shape)) if d not in (row, col) and lay.counts[d] > 1]
    whole = [d for d in range(len(lay.shape)) if d not in (row, col) and lay.counts[d] == 1]
    caption = ", ".join(f"dim {d} whole 0:{lay.shape[d]}" for d in whole) or None
    table = Table(show_lines=True, caption=caption)
    corner = f"dim {row}" if row is not None else ""
    table.add_column(corner + (f" \\ dim {col}" if col is not None else ""), style="bold")
    col_blocks = range(lay.counts[col]) if col is not None else [0]
    for c in col_blocks:
        table.add_column(_dim_range(lay, col, c) if col is not None else "devices",
                         justify="center")
    holders = lay.holders()
    row_blocks = range(lay.counts[row]) if row is not None else [0]
    for r in row_blocks:
        cells = []
        for c in col_blocks:
            entries = [(k, ids) for k, ids in holders.items()
                       if (row is None or k[row] == r) and (col is None or k[col] == c)]
            cells.append(Text(_cell_text(lay, folded, entries),
                              style=PALETTE[(r * len(col_blocks) + c) % len(PALETTE)]))
        label = _dim_range(lay, row, r) if row is not None else "scalar"
        table.add_row(label, *cells)
    return table


def _dim_range(lay: Layout, d: int, b: int) -> str:
    start, stop = lay.ranges_of(tuple(b if i == d else 0 for i in range(len(lay.shape))))[d]
    return range_text(start, stop, lay.local_shape[d] - (stop - start))


def _cell_text(lay: Layout, folded: list[int], entries) -> str:
    if not folded:
        return "dev " + ids_text(entries[0][1]) if entries else ""
    lines = []
    for index, ids in entries:
        where = " ".join(f"d{d} {_dim_range(lay, d, index[d])}" for d in folded)
        lines.append(f"{where}: dev {ids_text(ids)}")
    return "\n".join(lines)


def brief_table(values: list[ShownValue]):
    """One line per sharded op result: its sharding, blocks and local shape."""
    from rich.table import Table

    table = Table(title="sharded op results", show_lines=False)
    for h in ("value", "op", "type", "sharding", "layout"):
        table.add_column(h)
    for v in values:
        table.add_row(v.name, v.op_name, str(v.type), f"{v.sharding.params()}", _brief(v))
    return table


def _brief(v: ShownValue) -> str:
    shape = _static_shape(v.type)
    if v.mesh is None or shape is None:
        return "-"
    lay = layout(shape, v.sharding, v.mesh)
    local = "x".join(map(str, lay.local_shape)) or "scalar"
    pad = ", padded" if lay.is_padded else ""
    return f"{_plural(lay.num_blocks, 'block')} x{lay.replication}, local {local}{pad}"
