"""mdf_engine: a fast, safe execution engine for ModECI MDF models."""

from .errors import MDFError

__version__ = "0.1.0"
__all__ = ["MDFError", "__version__"]
