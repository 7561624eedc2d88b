"""Token endpoints for the end-to-end tests: a Microsoft Entra authority (OpenID
configuration + client-credentials token) and a Google OAuth token endpoint for
service-account key files (JWT bearer grant). Each checks what the client sends."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from tests.fakes.http import FakeApi, Reply, Request


@dataclass
class EntraFake(FakeApi):
    """``AZURE_AUTHORITY_HOST`` points here; tokens are ``entra-<n>``."""

    grants: list[dict[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.route(
            "GET",
            r"/(?P<tenant>[^/]+)/v2\.0/\.well-known/openid-configuration",
            "openid",
            self._openid,
        )
        self.route("POST", r"/(?P<tenant>[^/]+)/oauth2/v2\.0/token", "token", self._token)

    def _openid(self, request: Request, tenant: str) -> Reply:
        base = f"{request.base_url}/{tenant}"
        return (
            200,
            {},
            {
                "token_endpoint": f"{base}/oauth2/v2.0/token",
                "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                "device_authorization_endpoint": f"{base}/oauth2/v2.0/devicecode",
                "issuer": f"{base}/v2.0",
                "tenant_region_scope": "NA",
            },
        )

    def _token(self, request: Request, tenant: str) -> Reply:
        form = {k: v[-1] for k, v in parse_qs(request.body.decode()).items()}
        self.grants.append({"tenant": tenant, **form})
        if form.get("grant_type") != "client_credentials" or form.get("client_secret") != "s3cret":
            return 401, {}, {"error": "invalid_client", "error_description": "bad secret"}
        token = f"entra-{len(self.grants)}"
        return (
            200,
            {},
            {
                "token_type": "Bearer",
                "expires_in": 3600,
                "ext_expires_in": 3600,
                "access_token": token,
            },
        )


def jwt_claims(token: str) -> dict[str, Any]:
    """The claims of a JWT (unverified): enough to see who signed in for what."""
    payload = token.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))


def google_token_route(api: FakeApi, grants: list[dict[str, str]]) -> None:
    """Add ``POST /token`` (service-account JWT bearer grant) to a fake."""

    def token(request: Request) -> Reply:
        form = {k: v[-1] for k, v in parse_qs(request.body.decode()).items()}
        grants.append(form)
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return 400, {}, {"error": "unsupported_grant_type"}
        return (
            200,
            {},
            {
                "access_token": f"ya29.fake-{len(grants)}",
                "expires_in": 3600,
                "token_type": "Bearer",
            },
        )

    api.route("POST", r"/token", "oauth.token", token)
