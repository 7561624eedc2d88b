"""boto3 sessions and clients: the standard credential chain, a profile, or an assumed role.

:func:`member_session` is the session for one member account of an AWS Organization: it
assumes the member role lazily, on the first call made with it, and botocore refreshes
the credentials before they expire (long runs outlive the one-hour default). A role that
cannot be assumed raises :class:`RoleNotAssumable` from that first call, once per
account: later calls in the same run get the same answer without asking STS again.

Retries are botocore's own. :func:`client_config` sets "standard" mode (throttling and
5xx retried with exponential backoff and jitter) for the clients it is given to directly
(STS, Organizations); the EC2 and CloudWatch clients of
:class:`~gpuplan.providers.aws.provider.AwsAdapter` merge it with "adaptive" mode
(standard plus a client-side rate limiter). After the last attempt the error reaches
the adapter, which reports it. ``AWS_ENDPOINT_URL`` is honoured by botocore itself, which is how the
end-to-end tests point the CLI at ``moto_server`` with no test hook in this code.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import boto3
import botocore.session
from botocore.config import Config
from botocore.credentials import (
    CredentialProvider,
    CredentialResolver,
    DeferredRefreshableCredentials,
)
from botocore.exceptions import BotoCoreError, ClientError

from gpuplan.providers.base import ProviderError

DEFAULT_ATTEMPTS = 5
"""Retries after the first call, as botocore's ``retries.max_attempts`` counts them (its
``total_max_attempts`` would count the first call too): at most 6 calls per request."""
USER_AGENT = "gpuplan"
SESSION_NAME = "gpuplan"
"""``RoleSessionName`` of every assumed role: CloudTrail shows gpuplan's calls by it."""


class RoleNotAssumable(ProviderError):
    """STS refused to hand out the member role's credentials (missing role, trust policy,
    SCP, suspended account); the message names the role and the refusal."""


def client_config(max_attempts: int = DEFAULT_ATTEMPTS) -> Config:
    return Config(
        retries={"mode": "standard", "max_attempts": max_attempts},
        connect_timeout=10,
        read_timeout=30,
        user_agent_appid=USER_AGENT,
    )


def make_session(profile: str | None = None, role_arn: str | None = None) -> boto3.Session:
    """A session from the standard chain (or ``profile``), assuming ``role_arn`` if given.

    The assumed role's credentials are refreshed by botocore before they expire. Raises
    :class:`ProviderError` when the profile is unknown or the role cannot be assumed.
    """
    try:
        base = boto3.Session(profile_name=profile) if profile else boto3.Session()
        if not role_arn:
            return base
        sts = base.client("sts", config=client_config())
        session = MemberSessions(sts, profile).session(role_arn)
        session.get_credentials().get_frozen_credentials()  # assume now: fail at the start
    except (BotoCoreError, ClientError, RoleNotAssumable) as exc:
        message = exc.message if isinstance(exc, RoleNotAssumable) else str(exc)
        raise ProviderError(f"aws: cannot get credentials: {message}") from exc
    return session


class MemberSessions:
    """Sessions for member accounts, each assuming its role on first use.

    ``sts`` is one STS client of the organisation's credentials, shared by every member
    account (clients are thread-safe). All member sessions share one botocore data
    loader: a fresh loader per session re-reads the service models (~0.25 s per account
    for EC2 and CloudWatch clients; ~0.03 s when shared). Member sessions read
    ``profile``'s settings (region, endpoint) but never its credentials.
    """

    def __init__(self, sts: Any, profile: str | None = None) -> None:
        from botocore.loaders import create_loader

        # botocore logs a failed refresh with its traceback at WARNING before raising
        # it; the refusal reaches the run as one problem line instead.
        logging.getLogger("botocore.credentials").setLevel(logging.ERROR)
        self._sts = sts
        self._profile = profile
        self._loader = create_loader()

    def session(self, role_arn: str) -> boto3.Session:
        """A session whose credentials come from ``AssumeRole(role_arn)`` when first used."""
        core = botocore.session.Session(profile=self._profile)
        core.register_component("data_loader", self._loader)
        core.register_component(
            "credential_provider", CredentialResolver([_Lazy(_assume_once(self._sts, role_arn))])
        )
        return boto3.Session(botocore_session=core)


class _Lazy(CredentialProvider):  # type: ignore[misc]  # botocore ships no type hints
    METHOD = "gpuplan-assume-role"

    def __init__(self, refresh: Callable[[], dict[str, str]]) -> None:
        super().__init__()
        self._refresh = refresh

    def load(self) -> DeferredRefreshableCredentials:
        return DeferredRefreshableCredentials(refresh_using=self._refresh, method=self.METHOD)


def _assume_once(sts: Any, role_arn: str) -> Callable[[], dict[str, str]]:
    """The refresh function: AssumeRole, or the refusal it got the first time."""
    refused: list[RoleNotAssumable] = []
    lock = threading.Lock()
    role = role_arn.split(":role/", 1)[-1]

    def fetch() -> dict[str, str]:
        with lock:
            if refused:
                raise refused[0]
            try:
                answer = sts.assume_role(RoleArn=role_arn, RoleSessionName=SESSION_NAME)
            except ClientError as exc:
                err = exc.response.get("Error", {})
                why = f"{err.get('Code', 'error')}: {err.get('Message', '')}".rstrip(": ")
                refused.append(RoleNotAssumable(f"role {role} not assumable: {why}"))
                raise refused[0] from None
            except BotoCoreError as exc:
                # Not cached: a network failure says nothing about the role.
                raise RoleNotAssumable(f"role {role} not assumable: {exc}") from None
        creds = answer["Credentials"]
        return {
            "access_key": creds["AccessKeyId"],
            "secret_key": creds["SecretAccessKey"],
            "token": creds["SessionToken"],
            "expiry_time": creds["Expiration"].isoformat(),
        }

    return fetch
