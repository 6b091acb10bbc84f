"""Deeply nested programs for the tests and benchmarks of issue 15 and 28
(``tests/test_deep_nesting.py``, ``tests/test_cli_misuse_table.py``,
``benchmarks/nesting.py``): regions nested ``depth`` levels, each level one op."""
from __future__ import annotations

T = "tensor<8xf32>"
MESH = 'sdy.mesh @mesh = <["x"=2]>\n'


def while_nest(depth: int, sdy: bool = True) -> str:
    """``depth`` stablehlo.while ops, each in the body of the previous; each runs once.
    Without ``sdy``, no mesh and no arguments (``shardy-ref-translate`` runs it as it is)."""
    if sdy:
        lines = [MESH + "func.func @main(%arg0: tensor<i32> {sdy.sharding = "
                 "#sdy.sharding<@mesh, []>}) -> tensor<i32> {"]
    else:
        lines = ["func.func @main() -> tensor<i32> {",
                 "  %arg0 = stablehlo.constant dense<5> : tensor<i32>"]
    lines += ["  %zero = stablehlo.constant dense<0> : tensor<i32>",
              "  %one = stablehlo.constant dense<1> : tensor<i32>"]
    for k in range(depth):
        lines += [f"  %w{k} = stablehlo.while(%i{k} = %zero) : tensor<i32>", "  cond {",
                  f"    %c{k} = stablehlo.compare LT, %i{k}, %one : "
                  "(tensor<i32>, tensor<i32>) -> tensor<i1>",
                  f"    stablehlo.return %c{k} : tensor<i1>", "  } do {"]
    lines.append("  %inner = stablehlo.add %arg0, %one : tensor<i32>")
    for k in reversed(range(depth)):
        inner = f"%w{k + 1}" if k + 1 < depth else "%inner"
        lines += [f"    %n{k} = stablehlo.add %i{k}, {inner} : tensor<i32>",
                  f"    stablehlo.return %n{k} : tensor<i32>", "  }"]
    return "\n".join([*lines, "  return %w0 : tensor<i32>", "}", ""])


def named_computation_nest(depth: int) -> str:
    """``depth`` sdy.named_computation ops, each in the body of the previous."""
    lines = [MESH + f'func.func @main(%arg0: {T} {{sdy.sharding = #sdy.sharding<@mesh, '
             f'[{{"x"}}]>}}) -> {T} {{']
    for k in range(depth):
        lines.append(f'  %r{k} = sdy.named_computation<"n{k}">({f"%a{k - 1}" if k else "%arg0"})'
                     f" (%a{k}: {T}) {{")
    lines.append(f"  %t = stablehlo.tanh %a{depth - 1} : {T}")
    for k in reversed(range(depth)):
        lines += [f"  sdy.return {f'%r{k + 1}' if k + 1 < depth else '%t'} : {T}",
                  f"  }} : ({T}) -> {T}"]
    return "\n".join([*lines, f"  return %r0 : {T}", "}", ""])


def case_nest(depth: int, sdy: bool = True) -> str:
    """``depth`` stablehlo.case ops, branch 1 of each holding the next; the innermost
    adds ``%arg1`` to itself. With ``sdy``, a mesh and ``%arg1`` sharded on it."""
    sharding = ' {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}' if sdy else ""
    lines = [(MESH if sdy else "") +
             f"func.func @main(%arg0: tensor<i32>, %arg1: {T}{sharding}) -> {T} {{"]
    for k in range(depth):
        lines += [f'  %r{k} = "stablehlo.case"(%arg0) ({{', f"    stablehlo.return %arg1 : {T}",
                  "  }, {"]
    lines.append(f"  %t = stablehlo.add %arg1, %arg1 : {T}")
    for k in reversed(range(depth)):
        lines += [f"  stablehlo.return {f'%r{k + 1}' if k + 1 < depth else '%t'} : {T}",
                  f"  }}) : (tensor<i32>) -> {T}"]
    return "\n".join([*lines, f"  return %r0 : {T}", "}", ""])


NESTS = {"named_computation": named_computation_nest, "case": case_nest}
