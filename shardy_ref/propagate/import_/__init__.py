"""The import passes: what runs before propagation to put a module into the form it
expects (https://openxla.org/shardy/sdy_import_passes; order in upstream's
``shardy/dialect/sdy/transforms/import/import_pipeline.cc``). One module per pass (or per
pair of inverse passes); each registers itself under upstream's name."""
