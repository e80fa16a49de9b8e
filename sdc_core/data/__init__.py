"""Data in and out (docs/columns.md): reading tables and inferring their columns' kinds
(:mod:`~sdc_core.data.io`), what a file decodes to before it is materialised
(:mod:`~sdc_core.data.decoded`), the column model (:mod:`~sdc_core.data.columns`) and numbers
read as category codes (:mod:`~sdc_core.data.codes`); beside them, the built-in data sets
(README.md)."""
