"""The model's core: option specs and limits, encoding parameters, the shared cache, axis sampling, and the
words (coverage, digits, colour bounds) every result is reported in."""
