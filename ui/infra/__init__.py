"""Server infrastructure, process-wide and outside any one session: security headers, the
memory ledger, the worker pool, the start-up warm-up, the pages' run times
(docs/architecture.md, "Layers")."""
