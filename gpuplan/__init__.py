"""gpuplan: what a GPU costs everywhere, what a training job will cost, who pays for idle GPUs.

Importing this package is cheap on purpose: no cloud SDK, no terminal UI. The Python
API lives in :mod:`gpuplan.api`.
"""

__version__ = "0.1.0"
