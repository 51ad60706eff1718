"""posenc_gui: a desktop lab for transformer positional encodings."""

__version__ = "0.1.0"
