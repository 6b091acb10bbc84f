"""Upstream ``transforms/export/explicit_reshards_util.cc``
(https://github.com/openxla/shardy/blob/a0277a83e7f8/shardy/dialect/sdy/transforms/export/explicit_reshards_util.cc),
split by concern: ``common_axes`` (the common factor shardings an op is resharded to),
``factor_reshards`` (inserting the reshards), ``unreduced_collectives`` (all-reduces for
unreduced axes) and ``single_device`` (ops on a maximal mesh)."""
