"""Tables a statistical office publishes (docs/tables.md): response tables with small-count
suppression (:mod:`~sdc_core.tables.responses`), cross tables with their margins
(:mod:`~sdc_core.tables.crosstab`), primary rules, the audit and secondary suppression,
differential privacy and the cell key method, one published table
(:mod:`~sdc_core.tables.table_release`) and differencing between two."""
