"""The Textual terminal UI (``gpuplan tui``): a thin shell over the use-case layer.

Screens render what the use cases return and turn key presses into use-case calls;
they hold no pricing, planning or lifecycle rules of their own. Importing this package
imports nothing heavy: Textual loads with :mod:`gpuplan.tui.app`, cloud SDKs only when
the Fleet screen builds a provider.
"""
