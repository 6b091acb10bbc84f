"""The tools' cache of the code ``dataclasses`` compiles (issue 30, start-up): a class built
from cached code is the class built from compiled source, and the cache only ever costs a
compile when its files are missing, damaged or stale."""
from __future__ import annotations

import builtins
import dataclasses
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardy_ref.tools.dataclass_code_cache import CodeCache, build_directory

MODULE = "shardy_ref._dataclass_code_cache_probe"
METHODS = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__",
           "__lt__")


@pytest.fixture
def probe_module(monkeypatch):
    """A module of ours to define classes in (the cache serves shardy_ref modules only)."""
    module = types.ModuleType(MODULE)
    monkeypatch.setitem(sys.modules, MODULE, module)
    return module


def _make(spec: dict, exec_=None, module: str = MODULE):
    """The dataclass ``spec`` describes, its methods compiled through ``exec_`` (None:
    the builtin ``exec``, even where the tools' cache is installed)."""
    fields = [(name, int, dataclasses.field(default=default)) if default is not None
              else (name, int) for name, default in spec["fields"]]
    saved = dataclasses.__dict__.get("exec")  # a cache the tools installed in this process
    dataclasses.exec = builtins.exec if exec_ is None else exec_
    try:
        return dataclasses.make_dataclass("Probe", fields, namespace={"__module__": module},
                                          **spec["options"])
    finally:
        if saved is None:
            dataclasses.__dict__.pop("exec", None)
        else:
            dataclasses.exec = saved


@st.composite
def class_specs(draw) -> dict:
    names = draw(st.lists(st.sampled_from(["a", "b", "x", "y", "axes", "name"]), min_size=0,
                          max_size=4, unique=True))
    defaults = draw(st.lists(st.integers(0, 3), min_size=len(names), max_size=len(names)))
    split = draw(st.integers(0, len(names)))  # fields after the split have defaults
    fields = [(n, d if i >= split else None) for i, (n, d) in enumerate(zip(names, defaults))]
    frozen = draw(st.booleans())
    options = {"frozen": frozen, "slots": draw(st.booleans()), "eq": draw(st.booleans()),
               "order": False, "repr": draw(st.booleans())}
    options["order"] = options["eq"] and draw(st.booleans())
    return {"fields": fields, "options": options}


def _same_class(got, want, spec: dict) -> None:
    for method in METHODS:
        a, b = got.__dict__.get(method), want.__dict__.get(method)
        assert (a is None) == (b is None), method
        if isinstance(a, types.FunctionType):
            assert a.__code__ == b.__code__, method
            assert a.__code__.co_filename == b.__code__.co_filename
            assert a.__annotations__ == b.__annotations__, method
    values = list(range(len(spec["fields"])))
    x, y = got(*values), want(*values)
    if spec["options"].get("repr", True):
        assert repr(x) == repr(y)
    assert (x == got(*values)) == (y == want(*values))
    if spec["options"]["frozen"] and spec["fields"]:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(x, spec["fields"][0][0], 9)


@given(class_specs())
def test_classes_from_cached_code_equal_classes_from_source(tmp_path_factory, spec):
    directory = str(tmp_path_factory.mktemp("codes"))
    sys.modules[MODULE] = types.ModuleType(MODULE)
    try:
        want = _make(spec)
        cold = CodeCache(directory)
        _same_class(_make(spec, cold.exec), want, spec)
        cold.save()
        warm = CodeCache(directory)
        _same_class(_make(spec, warm.exec), want, spec)
        assert not any(codes.dirty for codes in warm.modules.values())  # nothing compiled
    finally:
        del sys.modules[MODULE]


SPEC = {"fields": [("a", None), ("b", 1)], "options": {"frozen": True, "slots": True}}


def test_a_damaged_file_is_compiled_over(tmp_path, probe_module):
    path = tmp_path / f"{MODULE}.marshal"
    path.write_bytes(b"\x00not marshal")
    cache = CodeCache(str(tmp_path))
    _same_class(_make(SPEC, cache.exec), _make(SPEC), SPEC)
    cache.save()
    warm = CodeCache(str(tmp_path))
    _make(SPEC, warm.exec)
    assert warm.modules[MODULE].loaded and not warm.modules[MODULE].dirty


def test_classes_of_other_modules_are_compiled_as_usual(tmp_path):
    cache = CodeCache(str(tmp_path))
    _make(SPEC, cache.exec, module=__name__)
    assert cache.modules == {} and list(tmp_path.iterdir()) == []


def test_a_mostly_stale_file_keeps_only_what_was_used(tmp_path, probe_module):
    stale = CodeCache(str(tmp_path))
    for i in range(60):  # sixty versions of a class, edited since
        _make({"fields": [(f"f{i}", None)], "options": {}}, stale.exec)
    stale.save()
    cache = CodeCache(str(tmp_path))
    _make(SPEC, cache.exec)
    assert len(cache.modules[MODULE].loaded) > 2 * len(cache.modules[MODULE].used) + 32
    cache.save()
    assert set(CodeCache(str(tmp_path))._load(MODULE).loaded) == \
        set(cache.modules[MODULE].used)


REPORT = ("import dataclasses, shardy_ref.tools, shardy_ref.tools.opt; "
          "c = dataclasses.__dict__.get('exec'); c = getattr(c, '__self__', None); "
          "print(-1 if c is None else sum(m.dirty for m in c.modules.values()), "
          "0 if c is None else len(c.modules))")


def _tool_process(tmp_path: Path, **env: str) -> tuple[int, int]:
    base = {k: v for k, v in os.environ.items() if k != "SHARDY_REF_NO_BYTECODE_CACHE"}
    base.update({"XDG_CACHE_HOME": str(tmp_path), **env})
    out = subprocess.run([sys.executable, "-c", REPORT], env=base, capture_output=True,
                         text=True, check=True).stdout.split()
    return int(out[0]), int(out[1])


def test_the_tools_compile_our_classes_once(tmp_path):
    compiled, modules = _tool_process(tmp_path)
    assert compiled == modules > 5  # a first run compiles every module's classes
    directory = Path(build_directory(str(tmp_path / "shardy-ref" / "dataclass-code")))
    assert (directory / "shardy_ref.ir.types.marshal").is_file()
    assert _tool_process(tmp_path) == (0, modules)  # the next run compiles none


def test_the_opt_out_leaves_dataclasses_alone(tmp_path):
    assert _tool_process(tmp_path, SHARDY_REF_NO_BYTECODE_CACHE="1") == (-1, 0)
    assert not (tmp_path / "shardy-ref" / "dataclass-code").exists()
