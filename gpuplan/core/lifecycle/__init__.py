"""The idle lifecycle's pure side: instances, signals, the idle decision, faults, schedules,
lifetimes and exemptions, planned actions, and their replay."""
