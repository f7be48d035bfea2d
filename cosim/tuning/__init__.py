"""Tuning: a search space of schedules in, the trials and the best configuration out
(``docs/tune.md``); each trial is a study run. Uses studies, runs and backends."""
