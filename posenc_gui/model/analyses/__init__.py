"""The analyses of an encoding: uniqueness and closest pairs, linear relation, similarity, spectra, addition,
the Scorecard and the A/B comparison. Each module loads with the panel that uses it (this package imports none)."""
