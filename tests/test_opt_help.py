"""``shardy-ref-opt --help`` lists every registered pass with its description and options."""
from __future__ import annotations

import dataclasses

import pytest

from shardy_ref.pass_manager import PASS_MODULES
from shardy_ref.tools.opt import parse_args
from shardy_ref.tools.opt_help import description, load_all_passes, pass_options


@pytest.fixture(scope="module")
def help_text():
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        parse_args(["--help"])
    assert done.value.code == 0
    return out.getvalue()


def test_usage_and_every_pass_with_its_options(help_text):
    assert "-split-input-file" in help_text and "--pass-pipeline=PIPELINE" in help_text
    lines = help_text.splitlines()
    passes = load_all_passes()
    assert set(passes) == set(PASS_MODULES)
    for name, cls in passes.items():
        row = next(i for i, line in enumerate(lines) if line.startswith(f"  -{name} "))
        assert lines[row].split(" - ", 1)[1] == description(cls).replace("``", "'") != ""
        options = [f.name.rstrip("_").replace("_", "-") for f in dataclasses.fields(cls)] \
            if dataclasses.is_dataclass(cls) else []
        shown = [line.split()[0].lstrip("-").split("=")[0]
                 for line in lines[row + 1:row + 1 + len(options)]]
        assert shown == options, name


def test_option_types_and_defaults(help_text):
    assert "-debug-sharding-origins=<bool>" in help_text
    row = help_text.index("  -sdy-aggressive-propagate ")
    block = help_text[row:help_text.index("\n  -", row + 1)]
    assert "-propagation-strategy=<string>" in block and "default: aggressive" in block
    assert ("-conservative-propagation=<bool>                 - Whether to disallow split axes "
            "and non-divisible sharding axes during propagation (default: false)") in block
    assert "-replica-count=<int>" in help_text


def test_every_option_has_a_description_and_help_shows_it(help_text):
    lines = help_text.splitlines()
    options = 0
    for name, cls in load_all_passes().items():
        row = lines.index(next(line for line in lines if line.startswith(f"  -{name} ")))
        for offset, option in enumerate(pass_options(cls), 1):
            assert option.help.strip(), f"{name}: option {option.name} has no help text"
            assert "\n" not in option.help and "``" not in option.help, (name, option.name)
            assert not option.help.endswith("."), (name, option.name)
            shown = option.default or '""'
            assert lines[row + offset].split(" - ", 1) == [
                f"      -{option.name}={option.type}".ljust(54),
                f"{option.help} (default: {shown})"], (name, option.name)
            options += 1
    assert options > 50


def test_option_help_is_declared_on_the_field():
    from shardy_ref.partition.export.export_pipeline import ExportPipeline
    from shardy_ref.propagate.passes import BasicPropagationPass, UserPriorityPropagationPass
    from shardy_ref.transforms.common.propagation_options import ExportOptions

    def helps(cls):
        return {f.name: f.metadata["help"] for f in dataclasses.fields(cls)}

    basic = helps(BasicPropagationPass)
    assert basic["keep_sharding_rules"] == \
        "Whether to keep existing and created op sharding rules"
    user = helps(UserPriorityPropagationPass)  # inherited from the shared base, unchanged
    assert {k: user[k] for k in basic} == basic
    assert user["run_op_priority_propagation"] and user["propagation_strategy"]
    assert helps(ExportPipeline) == helps(ExportOptions)


def _stdout_of(argv, parse=parse_args):
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        parse(argv)
    assert done.value.code == 0
    return out.getvalue()


def test_help_is_plain_text(help_text):
    assert "``" not in help_text


def test_list_passes_lists_every_pass_as_mlir_opt_does(help_text):
    listed = _stdout_of(["--list-passes"])
    assert listed.startswith("Available Passes:\n")
    for name in PASS_MODULES:
        assert f"\n  -{name} " in listed, name
    assert listed.splitlines()[1:] == help_text.split("Passes and pass pipelines")[1] \
        .splitlines()[1:]


def test_version_of_every_tool(capsys):
    from shardy_ref import __version__
    from shardy_ref.tools import cli, translate

    assert _stdout_of(["--version"]).startswith(f"shardy-ref-opt (shardy_ref {__version__})")
    assert _stdout_of(["--version"], translate.parse_args).startswith(
        f"shardy-ref-translate (shardy_ref {__version__})")
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.startswith(f"shardy-ref (shardy_ref {__version__})")


def test_an_option_named_after_a_python_keyword_keeps_upstreams_name():
    """``except_`` holds StableHLO's ``except`` option of composite-to-call."""
    from shardy_ref.pass_manager import make_pass

    assert make_pass("stablehlo-legalize-composite-to-call", "except=a,b").except_ == ("a", "b")
