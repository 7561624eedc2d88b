"""boto3 sessions and clients: the standard credential chain, a profile, or an assumed role.

Retries are botocore's own ("standard" mode: throttling and 5xx are retried with
exponential backoff and jitter); after the last attempt the error reaches the adapter,
which reports it. ``AWS_ENDPOINT_URL`` is honoured by botocore itself, which is how the
end-to-end tests point the CLI at ``moto_server`` with no test hook in this code.
"""

from __future__ import annotations

from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from gpuplan.providers.base import ProviderError

DEFAULT_ATTEMPTS = 5
USER_AGENT = "gpuplan"


def client_config(max_attempts: int = DEFAULT_ATTEMPTS) -> Config:
    return Config(
        retries={"mode": "standard", "max_attempts": max_attempts},
        connect_timeout=10,
        read_timeout=30,
        user_agent_appid=USER_AGENT,
    )


def make_session(profile: str | None = None, role_arn: str | None = None) -> boto3.Session:
    """A session from the standard chain (or ``profile``), assuming ``role_arn`` if given.

    Raises :class:`ProviderError` when the profile is unknown or the role cannot be
    assumed.
    """
    try:
        base = boto3.Session(profile_name=profile) if profile else boto3.Session()
        if not role_arn:
            return base
        sts: Any = base.client("sts", config=client_config())
        creds = sts.assume_role(RoleArn=role_arn, RoleSessionName="gpuplan")["Credentials"]
    except (BotoCoreError, ClientError) as exc:
        raise ProviderError(f"aws: cannot get credentials: {exc}") from exc
    return boto3.Session(
        aws_access_key_id=creds["AccessKeyId"],
        aws_secret_access_key=creds["SecretAccessKey"],
        aws_session_token=creds["SessionToken"],
    )
