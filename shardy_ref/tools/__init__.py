"""Command-line tools: ``shardy-ref-opt`` (the sdy_opt drop-in) and ``shardy-ref``."""
import os as _os
import sys as _sys


def cache_bytecode() -> None:
    """Keep our compiled bytecode under ``$XDG_CACHE_HOME/shardy-ref/pycache`` when bytecode
    writing is off (``PYTHONDONTWRITEBYTECODE``) and no ``PYTHONPYCACHEPREFIX`` is set.

    Harnesses start the tools once per test; with writing off (and an editable install,
    which ships no ``.pyc``) every start would compile each of our modules again, more
    than a third of the start-up time. Python's ``sys.pycache_prefix`` puts the files
    outside the source tree, which stays as clean as the setting asks
    (https://docs.python.org/3/library/sys.html#sys.pycache_prefix).
    ``SHARDY_REF_NO_BYTECODE_CACHE=1`` leaves both settings as they are."""
    if not _sys.dont_write_bytecode or _sys.pycache_prefix is not None:
        return
    if _os.environ.get("SHARDY_REF_NO_BYTECODE_CACHE"):
        return
    base = _os.environ.get("XDG_CACHE_HOME") or _os.path.join(_os.path.expanduser("~"), ".cache")
    _sys.pycache_prefix = _os.path.join(base, "shardy-ref", "pycache")
    _sys.dont_write_bytecode = False


cache_bytecode()
