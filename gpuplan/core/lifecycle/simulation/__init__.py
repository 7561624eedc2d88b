"""The idle-savings simulator: replay the scheduled job over utilisation traces and compare
the dollars it saves with two oracles (see :mod:`.replay`)."""
