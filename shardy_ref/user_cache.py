"""The directory where shardy_ref keeps what it caches between runs: the parser snapshot
(:mod:`shardy_ref.parser.parser_snapshot`) and the tools' bytecode and dataclass code
(:mod:`shardy_ref.tools`). Imports nothing costly: the tools ask for it at start-up."""
from __future__ import annotations

import os


def cache_dir() -> str:
    """``$XDG_CACHE_HOME/shardy-ref``, else ``~/.cache/shardy-ref``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "shardy-ref")
