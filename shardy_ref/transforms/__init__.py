"""Generic MLIR passes upstream tests use alongside sdy passes (``symbol-dce``, ...)."""
