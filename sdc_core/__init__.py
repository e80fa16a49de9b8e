"""sdc_core: statistical disclosure control measures and methods, pure and vectorised.

Pandas/NumPy in, pandas/NumPy out; no user-interface code. The command line is
``python -m sdc_core`` (see ``sdc_core.cli``).
"""

__version__ = "0.1.0"
