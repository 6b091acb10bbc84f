"""propagate: see the project issues for what lands here."""
