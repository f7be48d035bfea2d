"""The named fusion schedules a user picks by word (``--schedule partial``, a study's
``schedule: full``): FuseFlow's unfused, partially fused (one region per layer) and fully
fused. The command line and the studies both read them here."""

from __future__ import annotations

from collections.abc import Callable

from ir import Program, Schedule

__all__ = ["NAMED_SCHEDULES"]

#: name -> the schedule it makes of a program
NAMED_SCHEDULES: dict[str, Callable[[Program], Schedule]] = {
    "unfused": Schedule.unfused, "partial": Schedule.by_scope, "full": Schedule.fused}
