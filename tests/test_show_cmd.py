"""``shardy-ref show``: what the pictures say (axes, devices, block ranges, replication,
padding) on every example and on a module with every feature, errors, and an SVG
snapshot."""
from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from shardy_ref.ir.sharding_layout import layout
from shardy_ref.parser import parse_module, print_module
from shardy_ref.testing.programs import programs
from shardy_ref.tools import cli, show_cmd
from tests.profiles import examples

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").rglob("*.mlir"))
SNAPSHOT = Path(__file__).parent / "snapshots" / "show_features.svg"

FEATURES = Path(__file__).parent / "snapshots" / "show_features.mlir"  # every feature


def _show(capsys, path, *args) -> tuple[int, str, str]:
    code = cli.main(["show", str(path), "--width", "1000", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _panels(out: str) -> dict[str, str]:
    """Panel title -> the panel's text (rich draws each picture in one panel)."""
    panels, title, lines = {}, None, []
    for line in out.splitlines():
        if line.startswith("╭"):
            title, lines = line.strip("╭╮─ "), []
        elif line.startswith("╰") and title is not None:
            panels[title] = "\n".join(lines)
            title = None
        elif title is not None:
            lines.append(line)
    return panels


def _device_mentions(text: str) -> Counter:
    """How often each device id is named after ``dev`` (``a-b`` runs expanded)."""
    seen = Counter()
    for listing in re.findall(r"dev (\d+(?:(?:, |-)\d+)*)", text):
        for part in listing.split(", "):
            lo, _, hi = part.partition("-")
            seen.update(range(int(lo), int(hi or lo) + 1))
    return seen


def _check_value(panel: str, v: show_cmd.ShownValue) -> None:
    shape = show_cmd._static_shape(v.type)
    if v.sharding is None:
        assert "no sharding: every device holds the whole tensor" in panel
        return
    if v.mesh is None or shape is None:
        return
    lay = layout(shape, v.sharding, v.mesh)
    assert v.sharding.params() in panel
    assert "local shape " + ("x".join(map(str, lay.local_shape)) or "scalar") in panel
    assert f"each held by {lay.replication} device" in panel
    # every device appears exactly once in the grid, with the devices holding its block
    ids = [b.device for b in lay.blocks]
    assert _device_mentions(panel) == Counter(ids)
    for index, holders in lay.holders().items():
        assert show_cmd.ids_text(holders) in panel
        for d, (start, stop) in enumerate(lay.ranges_of(index)):
            if lay.counts[d] > 1:
                assert f"{start}:{stop}" in panel
    for d, (size, count) in enumerate(zip(lay.shape, lay.counts, strict=True)):
        if count > 1:
            axes = ", ".join(f"{r.params()} ({r.size(v.mesh)})"
                             for r in v.sharding.dim_shardings[d].axes)
            assert f"dim {d}: {size} over {axes} -> {count} blocks" in panel
        if size % count:
            assert " pad" in panel and "not divisible" in panel


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_show_every_example(capsys, path):
    code, out, err = _show(capsys, path)
    assert (code, err) == (0, "")
    module = parse_module(path.read_text(), str(path))
    panels = _panels(out)
    meshes = show_cmd._meshes(module)
    for name, mesh in meshes.items():
        panel = panels[f"mesh @{name} = {mesh}"]
        for axis in mesh.axes:
            assert f'"{axis.name}"={axis.size}' in panel
        cells = Counter(int(n) for n in re.findall(r"│\s+(\d+)\s+(?=│)", panel))
        ids = mesh.device_ids or tuple(range(mesh.total_size))
        assert cells == Counter(ids) or mesh.is_maximal or not mesh.axes
    for v in show_cmd.collect_values(module, None, meshes):
        if v.kind == "op result":
            assert re.search(rf"│ {re.escape(v.name)}\s+│ {re.escape(v.op_name)}", out)
        else:
            _check_value(panels[f"{v.name}: {v.type}"], v)


def _propagated(text: str) -> str:
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline

    module = parse_module(text)
    PassManager(parse_pipeline("sdy-propagation-pipeline"), verify=verify_module).run(
        module, PassContext())
    return print_module(module)


@settings(max_examples=examples(8),  # capsys: _show reads (and resets) it every time
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(programs(manual_computations=True))
def test_show_random_programs_after_propagation(capsys, tmp_path_factory, text):
    path = tmp_path_factory.mktemp("show") / "program.mlir"
    path.write_text(_propagated(text))
    code, out, err = _show(capsys, path)
    assert (code, err) == (0, "")
    module = parse_module(path.read_text(), str(path))
    panels = _panels(out)
    for v in show_cmd.collect_values(module, None, show_cmd._meshes(module)):
        if v.kind != "op result":
            _check_value(panels[f"{v.name}: {v.type}"], v)


@pytest.fixture
def features(tmp_path) -> Path:
    path = tmp_path / "features.mlir"
    path.write_text(FEATURES.read_text())
    return path


def test_sub_axes_device_ids_and_folded_dims(capsys, features):
    code, out, _ = _show(capsys, features, "--value", "arg0")
    assert code == 0
    assert 'dim 0: 8 over "x":(1)2 (2) -> 2 blocks of 4 (closed)' in out
    assert 'dim 1: 6 over "y" (2) -> 2 blocks of 3 (open)' in out
    assert 'dim 2: 4 over "x":(2)2 (2) -> 2 blocks of 2 (closed)' in out
    # rows dim 0, columns dim 1, dim 2 folded into each cell; device_ids reversed
    assert re.search(r"│ 0:4\s+│ d2 0:2: dev 7 │ d2 0:2: dev 6 │", out)
    assert re.search(r"│\s+│ d2 2:4: dev 5 │ d2 2:4: dev 4 │", out)
    assert re.search(r"│ 4:8\s+│ d2 0:2: dev 3 │ d2 0:2: dev 2 │", out)


def test_meshes_replication_unreduced_and_maximal(capsys, features):
    _, out, _ = _show(capsys, features)
    panels = _panels(out)
    mesh = panels['mesh @mesh = #sdy.mesh<["x"=4, "y"=2], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>']
    assert '8 devices: "x"=4 x "y"=2 (device_ids order)' in mesh
    assert re.search(r"│ x=0 │\s+7\s+│\s+6\s+│", mesh)
    assert "maximal mesh: the single device 3" in panels[
        "mesh @maximal = #sdy.mesh<[], device_ids=[3]>"]
    b = panels["%arg1: tensor<8xf32>"]
    assert 'replicated (explicitly) along {"y"}' in b
    assert 'unreduced along {"x"}' in b and "by sum" in b
    assert "1 distinct block, each held by 8 devices" in b
    assert "dev 7, 6, 5, 4, 3, 2, 1, 0" in b
    assert "dev 3" in panels["result0: tensor<8x6x4xf32>"]


def test_padding_of_a_non_divisible_dim(capsys, features):
    _, out, _ = _show(capsys, features, "--value", "result1")
    assert "dim 0: 10 over \"x\" (4) -> 4 blocks of 3 (closed); not divisible: padded to " \
           "12, the last block holds 1" in out
    assert 'replicated along "y" (axes no dimension uses)' in out
    assert re.search(r"│ 9:10 \+2 pad\s+│\s+dev 1, 0\s+│", out)
    assert re.search(r"│ 0:3\s+│\s+dev 7, 6\s+│", out)


@pytest.mark.parametrize(("name", "title"), [
    ("%0", "%0: tensor<8x6x4xf32>"), ("0", "%0: tensor<8x6x4xf32>"),
    ("weights", "%0 (weights): tensor<8x6x4xf32>"), ("h", "%0 (h): tensor<8x6x4xf32>"),
    ("act", "%arg0 (act): tensor<8x6x4xf32>"), ("b", "%arg1 (b): tensor<8xf32>"),
    ("bias", "%arg1 (bias): tensor<8xf32>"),
    ("%arg1", "%arg1: tensor<8xf32>"), ("result1", "result1: tensor<10x3xf32>"),
    ("%c", "%cst (%c): tensor<10x3xf32>"),
])
def test_value_names(capsys, features, name, title):
    code, out, _ = _show(capsys, features, "--value", name)
    assert code == 0
    assert list(_panels(out)) == [title]


def test_unknown_value(capsys, features):
    code, out, err = _show(capsys, features, "--value", "%9")
    assert (code, out, err) == (1, "", "shardy-ref show: no value named %9\n")


@pytest.mark.parametrize("where", ["no/out.svg", "."])
def test_unwritable_svg(capsys, features, tmp_path, where):
    """Refused before anything is drawn (it used to draw the whole picture first)."""
    code, out, err = _show(capsys, features, "--svg", str(tmp_path / where))
    assert code == 1 and err.startswith("shardy-ref show: cannot write ") and out == ""


def test_verifier_error_is_located(capsys, tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text('sdy.mesh @m = <["x"=2]>\nfunc.func @main(%a: tensor<2xf32> '
                    '{sdy.sharding = #sdy.sharding<@m, [{"y"}]>}) {\n  return\n}\n')
    code, out, err = _show(capsys, path)
    assert code == 1 and out == ""
    assert re.match(rf"{re.escape(str(path))}:\d+:\d+: error: .*unknown axis", err)


def test_parse_error_is_located(capsys, tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text("module {\n  func.func @main(%a: tensor<2xf32>) {\n")
    code, out, err = _show(capsys, path)
    assert code == 1 and out == ""
    assert re.fullmatch(rf"{re.escape(str(path))}:2:\d+: error: .+\n", err)


def _normalised_svg(text: str) -> str:
    """The SVG without what could vary between runs: rich's id hash."""
    return re.sub(r"terminal-\d+", "terminal-ID", text)


def test_svg_snapshot(capsys, features, tmp_path):
    out_svg = tmp_path / "out.svg"
    code = cli.main(["show", str(features), "--width", "100", "--svg", str(out_svg)])
    assert code == 0
    svg = _normalised_svg(out_svg.read_text())
    assert "<svg" in svg and "maximal mesh: the single device 3" in svg.replace("&#160;", " ")
    # regenerate deliberately: SHOW_SNAPSHOT_UPDATE=1 pytest tests/test_show_cmd.py
    if os.environ.get("SHOW_SNAPSHOT_UPDATE") == "1":
        SNAPSHOT.write_text(svg)
    assert svg == SNAPSHOT.read_text()


def test_64_devices_get_64_distinct_colours(tmp_path):
    """Issue 28: each device of an 8x8 mesh (and each block of a sharding over it) is drawn
    in its own colour, as far as 64."""
    from rich.console import Console

    assert len(set(show_cmd.PALETTE)) == 64
    module = parse_module('sdy.mesh @m = <["x"=8, "y"=8]>\n')
    console = Console(record=True, width=200, color_system="truecolor")
    console.print(show_cmd.mesh_picture("m", show_cmd._meshes(module)["m"]))
    styles = {str(seg.style.bgcolor) for seg in console._record_buffer
              if seg.style is not None and seg.style.bgcolor is not None
              and seg.text.strip().isdigit()}
    assert len(styles) == 64
