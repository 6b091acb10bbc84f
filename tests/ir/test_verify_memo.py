"""The verifier's memo (``_verify_op_memoised``) skips only checks that would pass: a
module verified once inside a pipeline, then changed into each rule's invalid case, gets
exactly the errors the plain verifier reports."""
from __future__ import annotations

import pytest

from shardy_ref.ir.run_memo import pipeline_memos
from shardy_ref.ir.verify import collect_errors
from shardy_ref.parser import parse_module
from tests.ir.test_verify_rules import all_cases


def _ops(module):
    return list(module.walk())


def _transplant(target, source) -> bool:
    """Give ``target``'s ops ``source``'s attributes and types, op by op; False if the two
    modules differ in structure."""
    ops, others = _ops(target), _ops(source)
    if [op.name for op in ops] != [op.name for op in others] or any(
            len(a.results) != len(b.results) or len(a.regions) != len(b.regions)
            for a, b in zip(ops, others)):
        return False
    for op, other in zip(ops, others):
        op.attributes = dict(other.attributes)
        op.properties = other.properties
        for result, new in zip(op.results, other.results):
            result.type = new.type
        for region, new in zip(op.regions, other.regions):
            for block, new_block in zip(region.blocks, new.blocks):
                for arg, new_arg in zip(block.args, new_block.args):
                    arg.type = new_arg.type
    return True


def _messages(errors) -> list[str]:
    return [str(e) for e in errors]


def _rename_the_mesh_axis(module, text: str) -> None:
    """Give ``module``'s mesh (parsed from ``text``, with one axis "a") an axis "b"
    instead, as a pass replacing the mesh attribute would."""
    other = parse_module(text.replace('"a"=2]>', '"b"=2]>'))
    mesh_op = next(op for op in module.walk() if op.name == "sdy.mesh")
    mesh_op.attributes["mesh"] = next(
        op for op in other.walk() if op.name == "sdy.mesh").attributes["mesh"]


CASES = all_cases()


@pytest.mark.parametrize("rule", sorted(CASES))
def test_memo_reports_every_error_after_a_change(rule):
    case = CASES[rule]
    try:
        valid, invalid = parse_module(case.valid), \
            parse_module(case.invalid)
    except Exception:  # cases the parser itself rejects
        pytest.skip("not parseable without verification")
    with pipeline_memos():
        first = collect_errors(valid)
        if first or not _transplant(valid, invalid):
            pytest.skip("valid case does not verify, or the invalid one differs in structure")
        memoised = collect_errors(valid)
    assert _messages(memoised) == _messages(collect_errors(valid))


def test_memo_sees_mesh_and_operand_type_changes():
    text = ('sdy.mesh @mesh = <["a"=2]>\n'
            "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
            '  %0 = stablehlo.add %x, %x {sdy.sharding = #sdy.sharding_per_value<[<@mesh, '
            '[{"a"}]>]>} : tensor<4xf32>\n'
            "  return %0 : tensor<4xf32>\n}\n")
    module = parse_module(text)
    with pipeline_memos():
        assert collect_errors(module) == []
        _rename_the_mesh_axis(module, text)
        assert _messages(collect_errors(module)) == _messages(collect_errors(module)) != []
        assert collect_errors(parse_module(text)) == []
    module = parse_module(text)
    add = next(op for op in module.walk() if op.name == "stablehlo.add")
    with pipeline_memos():
        assert collect_errors(module) == []
        wide = parse_module(text.replace("tensor<4xf32>", "tensor<8xf32>"))
        add.results[0].type = next(
            op for op in wide.walk() if op.name == "stablehlo.add").results[0].type
        memoised = _messages(collect_errors(module))
    assert memoised == _messages(collect_errors(module)) != []


def test_module_environment_is_built_once_per_function_pass(monkeypatch):
    """A function pass verifies each function after it runs; the module's environment (its
    symbols) stays fixed meanwhile, so it is built once, not once per function (which was
    quadratic in the number of functions: benchmarks/scale.py's ``calls`` module)."""
    import shardy_ref.ir.verify as verify_pkg
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_module
    from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline

    funcs = "\n".join(
        f"func.func private @f{i}(%a: tensor<4xf32>) -> tensor<4xf32> {{\n"
        f"  %b = stablehlo.add %a, %a : tensor<4xf32>\n  return %b : tensor<4xf32>\n}}"
        for i in range(30))
    module = parse_module('sdy.mesh @mesh = <["x"=2]>\n' + funcs)
    built = []
    original = verify_pkg._module_env
    monkeypatch.setattr(verify_pkg, "_module_env", lambda m: built.append(m) or original(m))
    PassManager(parse_pipeline("func.func(canonicalize,cse)"),
                verify=verify_module).run(module, PassContext())
    assert 0 < len(built) <= 2, len(built)


def test_calls_look_their_callees_up_in_one_table_per_function_pass(monkeypatch):
    """Verifying each function after a function pass checks its calls against the module's
    symbols; the module's table is built once while they are fixed, not once per call
    (which was quadratic in the number of calls: scale.py's ``calls`` module)."""
    import shardy_ref.ir.symbols as symbols
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_module
    from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline

    funcs = "\n".join(
        f"func.func private @f{i}(%a: tensor<4xf32>) -> tensor<4xf32> {{\n"
        f"  %b = stablehlo.add %a, %a : tensor<4xf32>\n  return %b : tensor<4xf32>\n}}"
        for i in range(30))
    calls = "\n".join(f"  %c{i} = call @f{i}(%c{i - 1}) : (tensor<4xf32>) -> tensor<4xf32>"
                      for i in range(30)).replace("%c-1", "%x")
    main = (f"func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {{\n{calls}\n"
            "  return %c29 : tensor<4xf32>\n}")
    module = parse_module(funcs + "\n" + main)
    built = []
    original = symbols.SymbolTable.__init__

    def counting(self, op, *args, **kwargs):
        built.append(op)
        original(self, op, *args, **kwargs)

    monkeypatch.setattr(symbols.SymbolTable, "__init__", counting)
    PassManager(parse_pipeline("func.func(canonicalize,cse)"),
                verify=verify_module).run(module, PassContext())
    assert len([op for op in built if op is module]) <= 4, len(built)


FUNC_TEXT = ('sdy.mesh @mesh = <["a"=2]>\n'
             'func.func @f(%x: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>})'
             " -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}\n")


def _count_func_checks(monkeypatch) -> list:
    import shardy_ref.ir.verify as verify_pkg

    verify_pkg._load_rules()
    calls = []
    original = verify_pkg.FUNC_ATTR_VERIFIERS["sdy.sharding"]
    monkeypatch.setitem(verify_pkg.FUNC_ATTR_VERIFIERS, "sdy.sharding",
                        lambda *args: calls.append(args[2]) or original(*args))
    return calls


def test_function_argument_shardings_are_checked_once_while_unchanged(monkeypatch):
    """A pipeline verifies a function after every pass that changed it; the shardings of
    its arguments are checked again only when they, their types or the module's meshes
    changed."""
    calls = _count_func_checks(monkeypatch)
    module = parse_module(FUNC_TEXT)
    with pipeline_memos():
        assert collect_errors(module) == collect_errors(module) == []
        assert calls == [0]
    assert collect_errors(module) == []
    assert calls == [0, 0]  # outside a pipeline: no memo


def test_function_argument_memo_sees_type_and_mesh_changes():
    """The memo of an argument's sharding check is keyed by the argument's type and the
    module's meshes: after either changes, the memoised verify reports what the plain one
    does."""
    from shardy_ref.ir.builtin_attrs import TypeAttr

    module = parse_module(FUNC_TEXT)
    func = next(op for op in module.walk() if op.name == "func.func")
    wide = parse_module(FUNC_TEXT.replace("tensor<4xf32>", "tensor<4x4xf32>"))
    wide_func = next(op for op in wide.walk() if op.name == "func.func")
    with pipeline_memos():
        assert collect_errors(module) == []
        func.attributes["function_type"] = wide_func.attributes["function_type"]
        assert isinstance(func.attributes["function_type"], TypeAttr)
        func.regions[0].blocks[0].args[0].type = wide_func.regions[0].blocks[0].args[0].type
        memoised = _messages(collect_errors(module))
    assert memoised == _messages(collect_errors(module))
    assert [m for m in memoised if "arg 0" in m and "rank" in m], memoised

    module = parse_module(FUNC_TEXT)
    with pipeline_memos():
        assert collect_errors(module) == []
        _rename_the_mesh_axis(module, FUNC_TEXT)
        memoised = _messages(collect_errors(module))
    assert memoised == _messages(collect_errors(module)) != []


T48 = "tensor<4x8xf32>"
RULE = "{sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=4, j=8}>}"
RULED = f"""func.func @f(%a: {T48}, %b: tensor<8xf32>) -> {T48} {{
  %0 = stablehlo.abs %a {RULE} : {T48}
  %1 = stablehlo.abs %0 {RULE} : {T48}
  %2 = stablehlo.abs %b {RULE} : tensor<8xf32>
  return %1 : {T48}
}}"""


def test_a_shared_sharding_rule_is_checked_once_per_types(monkeypatch):
    """The three ops share one rule object (as op-local rules are shared in a pipeline):
    the first two have the same types, checked once; the third's types do not fit it."""
    from shardy_ref.ir.verify import rules

    monkeypatch.setenv("SHARDY_REF_CROSS_CHECK_CHANGES", "0")
    expected = _messages(collect_errors(parse_module(RULED)))
    assert "mapping rank must match" in expected[0]
    module = parse_module(RULED)
    ops = [op for op in module.walk() if op.name == "stablehlo.abs"]
    shared = ops[0].attributes["sdy.sharding_rule"]
    for op in ops[1:]:
        op.attributes["sdy.sharding_rule"] = shared
    checked = []
    check = rules.verify_op_sharding_rule
    monkeypatch.setattr(rules, "verify_op_sharding_rule",
                        lambda op, rule: (checked.append(op), check(op, rule)))
    with pipeline_memos():
        assert _messages(collect_errors(module)) == expected
    assert checked == [ops[0], ops[2]]


RESHAPES = """func.func @f(%a: tensor<8xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %c24 = stablehlo.constant dense<[2, 4]> : tensor<2xi64>
  %c22 = stablehlo.constant dense<[2, 2]> : tensor<2xi64>
  %0 = stablehlo.dynamic_reshape %a, %c24 : (tensor<8xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %1 = stablehlo.dynamic_reshape %a, %c22 : (tensor<8xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<?x?xf32>
}"""


def test_ops_of_equal_types_share_their_checks_unless_a_constant_operand_differs(
        monkeypatch):
    """The two reshapes have the same types and attributes; the second's output shape, a
    constant operand, does not fit its input: checked on its own, it fails."""
    monkeypatch.setenv("SHARDY_REF_CROSS_CHECK_CHANGES", "0")
    expected = _messages(collect_errors(parse_module(RESHAPES)))
    assert "output_shape is incompatible" in expected[0]
    module = parse_module(RESHAPES)
    shared = {}
    for op in module.walk():  # equal types as one object, as a parser interning them makes
        for value in op.results:
            value.type = shared.setdefault(value.type, value.type)
    with pipeline_memos():
        assert _messages(collect_errors(module)) == expected
