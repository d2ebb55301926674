"""Scheduling: MDF conditions turned into graph-scheduler objects (``conditions``), and the
compiled state machine that replaces graph-scheduler inside jitted runs (``compiled``)."""
