"""Command-line tools: ``shardy-ref-opt`` (the sdy_opt drop-in) and ``shardy-ref``."""
