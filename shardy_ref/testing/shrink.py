"""Greedy shrinking of a failing module, after hypothesis has found the smallest failing
seed: erase ops of ``@main`` whose results are unused, bypass sharding constraints, drop
argument and result shardings, one at a time, keeping each change that still fails. Every
step keeps the module valid, so what is left is a small valid program that still fails."""
from __future__ import annotations

from collections.abc import Callable, Iterator

from shardy_ref.ir.builtin_attrs import ArrayAttr, DictionaryAttr

_KEEP = frozenset({"func.return", "func.func"})


def shrink(text: str, fails: Callable[[str], bool], max_checks: int = 500) -> str:
    """The smallest module reached from ``text`` by single steps that each still
    ``fails`` (at most ``max_checks`` candidates tried)."""
    checks = 0
    changed = True
    while changed and checks < max_checks:
        changed = False
        for candidate in _candidates(text):
            checks += 1
            if fails(candidate):
                text, changed = candidate, True
                break
            if checks >= max_checks:
                break
    return text


def _candidates(text: str) -> Iterator[str]:
    """Each single-step simplification of ``text``, latest ops first."""
    count = len(_body_ops(_load(text)))
    for i in reversed(range(count)):
        module = _load(text)
        op = _body_ops(module)[i]
        if op.name == "sdy.sharding_constraint":
            op.results[0].replace_all_uses_with(op.operands[0])
        if op.name not in _KEEP and not any(r.has_uses for r in op.results):
            op.erase()
            yield _print(module)
    for key in ("arg_attrs", "res_attrs"):
        attrs = _main(_load(text)).attributes.get(key)
        for i in range(len(attrs.value) if isinstance(attrs, ArrayAttr) else 0):
            module = _load(text)
            if _drop_sharding(_main(module), key, i):
                yield _print(module)


def _drop_sharding(func, key: str, index: int) -> bool:
    attrs = func.attributes[key]
    entry = attrs.value[index]
    if not isinstance(entry, DictionaryAttr) or "sdy.sharding" not in dict(entry.value):
        return False
    kept = DictionaryAttr(tuple((k, v) for k, v in entry.value if k != "sdy.sharding"))
    func.attributes[key] = ArrayAttr((*attrs.value[:index], kept, *attrs.value[index + 1:]))
    return True


def _load(text: str):
    from shardy_ref.parser import parse_module
    return parse_module(text, "<shrink>")


def _print(module) -> str:
    from shardy_ref.parser import print_module
    return print_module(module)


def _main(module):
    funcs = [op for op in module.walk() if op.name == "func.func"]
    return next((f for f in funcs if f.attributes["sym_name"].value == "main"), funcs[0])


def _body_ops(module) -> list:
    return list(_main(module).regions[0].blocks[0].ops)
