"""Trade-offs (docs/utility.md): a sweep's grid (:mod:`~sdc_core.sweep.grid`), the run that
evaluates its settings into a trade-off table (:mod:`~sdc_core.sweep.run`) and the combined
search for the cheapest setting under a target (:mod:`~sdc_core.sweep.search`)."""
