"""Scheduling. An MDF condition is read once (``parse``) into one frozen dataclass per condition
kind (``kinds``); from those, ``conditions`` builds graph-scheduler objects and a ready
scheduler (interpreted backend), and ``compiled`` + ``codegen`` the state machine that replaces
graph-scheduler inside jitted runs (compiled backend)."""
