"""Runs: a model or graph run on a backend, region by region, and what is measured on it
(work counts, lane reports, memory traces, the run as JSON, the files it writes). Uses the
backends; used by studies, tuning and the command line."""
