"""The export passes: what runs after propagation to hand the module on
(https://openxla.org/shardy/sdy_export_passes; order in upstream's
``shardy/dialect/sdy/transforms/export/export_pipeline.cc``). One module per pass; each
registers itself under upstream's name."""
