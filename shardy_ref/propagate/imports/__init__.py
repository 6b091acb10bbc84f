"""The import passes: what runs before propagation to put a module into the form it
expects (spec 002; order in ``algorithms.md`` §5.2). One module per pass (or per pair of
inverse passes); each registers itself under upstream's name."""
