"""The one place the version is written: the package's metadata (pyproject.toml) and `toolwire --version` read it
here, so `--version` needs no importlib.metadata (about 60 modules)."""

__version__ = "0.1.0"
