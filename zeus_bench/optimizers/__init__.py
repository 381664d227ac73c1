"""The optimizers floor (placeholder: helper h2a writes this package's contract)."""
