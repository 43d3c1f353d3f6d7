"""The package's version, importable from anywhere in the package without a cycle."""

__version__ = "0.2.0"
