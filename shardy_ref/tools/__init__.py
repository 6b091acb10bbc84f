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
    The code ``dataclasses`` compiles for our classes' methods is cached beside it, in
    ``dataclass-code`` (:mod:`shardy_ref.tools.dataclass_code_cache`), whatever the
    bytecode settings.
    ``SHARDY_REF_NO_BYTECODE_CACHE=1`` turns both off and leaves the settings as they are."""
    if _os.environ.get("SHARDY_REF_NO_BYTECODE_CACHE"):
        return
    from shardy_ref.tools.dataclass_code_cache import install
    from shardy_ref.user_cache import cache_dir

    base = cache_dir()
    install(_os.path.join(base, "dataclass-code"))
    if _sys.dont_write_bytecode and _sys.pycache_prefix is None:
        _sys.pycache_prefix = _os.path.join(base, "pycache")
        _sys.dont_write_bytecode = False


cache_bytecode()
