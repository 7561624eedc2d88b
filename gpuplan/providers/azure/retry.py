"""azure-core's retry policy with every setting explicit and jitter on the back-off.

azure-core's ``RetryPolicy`` retries 408, 429 and 5xx and honours ``Retry-After``, but
its defaults cap retries on bad statuses at 3 whatever ``retry_total`` says, and its
exponential back-off has no jitter: many subscriptions throttled at the same moment
would all retry in step. :func:`retry_policy` sets the totals explicitly (one number for
connection, read and status retries) and draws each back-off uniformly between 0 and
azure-core's exponential value (``backoff_s * 2 ** (n - 1)``, at most
:data:`BACKOFF_MAX_S`), the "full jitter" botocore and google-api-core use as well. A
``Retry-After`` from the service still wins. Loaded only with the Azure adapter.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from azure.core.pipeline.policies import RetryMode, RetryPolicy

BACKOFF_MAX_S = 60


class JitteredRetryPolicy(RetryPolicy[Any, Any]):
    """``RetryPolicy`` whose back-off is drawn from [0, azure-core's value)."""

    def __init__(self, *, rand: Callable[[], float] = random.random, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._rand = rand

    def get_backoff_time(self, settings: dict[str, Any]) -> float:
        return self._rand() * super().get_backoff_time(settings)


def retry_policy(total: int, backoff_s: float) -> JitteredRetryPolicy:
    """At most ``total`` retries of any kind, jittered exponential back-off."""
    return JitteredRetryPolicy(
        retry_total=total,
        retry_connect=total,
        retry_read=total,
        retry_status=total,
        retry_backoff_factor=backoff_s,
        retry_backoff_max=BACKOFF_MAX_S,
        retry_mode=RetryMode.Exponential,
    )
