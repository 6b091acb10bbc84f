"""The compiled code of the methods ``dataclasses`` generates for our classes, kept on disk
between runs of the command-line tools, as ``__pycache__`` keeps modules' code.

CPython's ``dataclasses`` writes each class's ``__init__``, ``__repr__``, ``__eq__``,
``__hash__`` and, for a frozen class, ``__setattr__`` and ``__delattr__`` as source text and
compiles it with ``exec`` when the class statement runs (``_create_fn`` in
https://github.com/python/cpython/blob/v3.11.7/Lib/dataclasses.py). Compiling is nearly
all of that work: about 0.5 ms per frozen slotted class, and a tool loads about a hundred
of them before it reads its input, half of its start-up after NumPy
(``benchmarks/startup.py``). The harnesses start a tool once per test chunk.

:func:`install` gives the ``dataclasses`` module an ``exec`` that, for source text compiled
on behalf of a ``shardy_ref`` module, runs the code compiled from that same text by an
earlier run; any other call goes to the builtin ``exec`` unchanged. A function made from
cached code is the one the text compiles to (same bytecode, constants, names and
annotations: ``tests/tools/test_dataclass_code_cache.py``). One file per module holds its
``{source text: code}``, read with ``marshal`` under a directory named for the Python build
(bytecode differs between versions); a missing, damaged or foreign file means compiling
as usual. New code is written when the process exits, atomically. ``shardy_ref.tools``
installs it when imported, as it sets ``sys.pycache_prefix``: the command lines own their
process; importing the rest of ``shardy_ref`` as a library changes nothing.
"""
from __future__ import annotations

import builtins
import marshal
import os
import sys
from types import CodeType

PACKAGE = "shardy_ref"
_builtin_exec = builtins.exec


class _ModuleCodes:
    """One module's cached code: what its file held and what this process used."""

    __slots__ = ("dirty", "loaded", "path", "used")

    def __init__(self, path: str, loaded: dict):
        self.path, self.loaded = path, loaded
        self.used: dict[str, CodeType] = {}
        self.dirty = False


class CodeCache:
    """``{module: its cached code}`` under one directory, filled on first use of each
    module, with the ``exec`` that ``dataclasses`` is given."""

    def __init__(self, directory: str):
        self.directory = directory
        self.modules: dict[str, _ModuleCodes] = {}

    def exec(self, source, globals=None, locals=None, /, **kwargs):
        """``exec`` with the code of ``source`` from the cache when a module of ours
        (named by ``globals``) has it compiled."""
        name = globals.get("__name__") if type(globals) is dict else None
        if (type(source) is not str or type(name) is not str
                or not (name == PACKAGE or name.startswith(PACKAGE + "."))):
            return _builtin_exec(source, globals, locals, **kwargs)
        return _builtin_exec(self.code(name, source), globals, locals, **kwargs)

    def code(self, module: str, source: str) -> CodeType:
        """The code ``exec(source)`` would compile, from ``module``'s file if it has it."""
        codes = self.modules.get(module) or self._load(module)
        code = codes.loaded.get(source)
        if code is None:
            # exec inherits no compiler flags from dataclasses, which has no __future__
            # imports; dont_inherit keeps this module's ``annotations`` out of it
            code = compile(source, "<string>", "exec", dont_inherit=True)
            codes.dirty = True
        codes.used[source] = code
        return code

    def _load(self, module: str) -> _ModuleCodes:
        path = os.path.join(self.directory, module + ".marshal")
        try:
            with open(path, "rb") as f:  # loads(read()): marshal.load(f) reads in small steps
                loaded = marshal.loads(f.read())
            if type(loaded) is not dict or not all(
                    type(k) is str and type(v) is CodeType for k, v in loaded.items()):
                loaded = {}
        except Exception:  # missing, truncated or written by another Python: compile
            loaded = {}
        codes = self.modules[module] = _ModuleCodes(path, loaded)
        return codes

    def save(self) -> None:
        """Write each module's file that lacked code this process compiled (best effort).
        A file keeps what it held unless that is mostly stale (classes since edited)."""
        for codes in self.modules.values():
            if not codes.dirty:
                continue
            keep = codes.used if len(codes.loaded) > 2 * len(codes.used) + 32 else \
                {**codes.loaded, **codes.used}
            tmp = f"{codes.path}.{os.getpid()}.tmp"
            try:
                os.makedirs(self.directory, exist_ok=True)
                with open(tmp, "wb") as f:
                    marshal.dump(keep, f)
                os.replace(tmp, codes.path)
                codes.loaded, codes.dirty = dict(keep), False
            except (OSError, ValueError):
                try:
                    os.unlink(tmp)
                except OSError:
                    pass


def build_directory(base: str) -> str:
    """The directory for this Python build's code under ``base``."""
    return os.path.join(base, f"{sys.implementation.cache_tag}-{sys.hexversion:x}")


def install(base: str) -> CodeCache | None:
    """Serve ``dataclasses``' compiled methods for our modules from files under ``base``
    and save new ones at exit; the installed cache, or None if one already was (or this
    ``dataclasses`` compiles some other way: then nothing changes)."""
    import atexit
    import dataclasses

    current = dataclasses.__dict__.get("exec")
    if current is not None or not hasattr(dataclasses, "_create_fn"):
        return None
    cache = CodeCache(build_directory(base))
    dataclasses.exec = cache.exec
    atexit.register(cache.save)
    return cache
