"""``sdy-convert-global-to-local``: rewrite a globally shaped, sharded program to the
per-device (local) program, lowering sdy collectives to StableHLO ones (upstream
``export/convert_global_to_local.cc``)."""
