"""VirtualCrime: an evaluation harness for what language models do in a criminal role inside a text sandbox."""

__version__ = "0.1.0"
