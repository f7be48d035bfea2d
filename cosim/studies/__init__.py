"""Studies: a YAML study in, cached per-run result rows, a table, plots and the nightly
verdict out (``docs/studies.md``). Uses runs and backends; never the command line."""
