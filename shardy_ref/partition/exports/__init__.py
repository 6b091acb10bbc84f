"""The export passes: what runs after propagation to hand the module on (``algorithms.md``
§5.2, the export stage). One module per pass; each registers itself under upstream's name."""
