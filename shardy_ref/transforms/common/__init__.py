"""Upstream ``shardy/dialect/sdy/transforms/common``
(https://github.com/openxla/shardy/tree/a0277a83e7f8/shardy/dialect/sdy/transforms/common):
what import, propagation and export passes share. ``op_properties`` (which ops are
elementwise, pure, speculatable; derived from the op definitions), ``propagation_options``
(``ExportOptions`` and the device-count options, declared once), ``inline_meshes``
(``sdy-inline-meshes``)."""
