"""What the clouds' bills say: daily cost lines, the estimate beside them, and the gap.

Pure: cost lines (from a cost API, through :mod:`gpuplan.providers.billing`) and the
ledger's estimate come in as values; reconciliations, budgets on actuals and chargeback
tables go out. No clock: ``today`` is an argument.
"""
