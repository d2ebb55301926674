"""Tier 0 of the compiled backend (see :mod:`.program`)."""
