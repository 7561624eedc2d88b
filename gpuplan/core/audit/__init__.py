"""Utilisation audit: where the dollars of running GPU instances go, and what to change.

Pure (no clock, no I/O): :mod:`.split` divides each instance's paid dollars into busy,
waiting, idle and unknown; :mod:`.rightsize` finds the cheapest catalog offer that fits
what the instance really used; :mod:`.advice` turns both into diagnoses with evidence and
dollars per month at stake.
"""
