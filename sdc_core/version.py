"""The package version, in a module of its own that imports nothing.

``pyproject.toml`` reads it for the wheel (``[tool.setuptools.dynamic]``), and
``sdc_core.__version__`` re-exports it; recipes record it (``sdc_core.recipe``).
"""

__version__ = "0.1.0"
