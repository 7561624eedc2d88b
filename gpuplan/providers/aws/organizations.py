"""AWS Organizations discovery: the member accounts a policy's ``scope.aws.accounts`` names.

``all`` is every ACTIVE account of the organisation (``ListAccounts``); ``{ous: [...]}``
is every ACTIVE account under those organisational units, at any depth
(``ListAccountsForParent`` and ``ListChildren`` per OU); a list of ids is taken as it is,
with no Organizations call at all (a team that names its accounts needs no
organisation-wide permission). Suspended, closing and closed accounts are left out:
nothing runs in them. The caller is the management account or a delegated
administrator (``organizations:List*``); see deploy/aws-org-discovery-policy.json.

Calls per run: one ``ListAccounts`` page per 20 accounts (``all``); per OU in the tree,
one ``ListAccountsForParent`` page per 20 accounts plus one ``ListChildren`` page per 20
child OUs. Accounts come out sorted and once each, whatever the order of the tree.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from gpuplan.providers.base import ProviderError
from gpuplan.providers.found import FoundScopes

ACTIVE = "ACTIVE"


def all_accounts(org: Any) -> list[str]:
    """Every ACTIVE account of the organisation, sorted. Raises ProviderError on failure:
    then nothing at all is known about the organisation."""
    try:
        found = {a["Id"] for a in _paged(org, "list_accounts") if _active(a)}
    except (ClientError, BotoCoreError) as exc:
        raise ProviderError(f"aws: cannot list the organisation's accounts: {_why(exc)}") from None
    return sorted(found)


def accounts_under(org: Any, ous: Sequence[str]) -> FoundScopes:
    """ACTIVE accounts under each OU and its child OUs; an OU that cannot be read is a
    problem line naming it, and the other OUs are still walked."""
    out = FoundScopes()
    found: set[str] = set()
    for ou in ous:
        try:
            found.update(_walk(org, ou))
        except (ClientError, BotoCoreError) as exc:
            out.problems.append(f"aws {ou}: cannot list its accounts: {_why(exc)}")
    out.ids = sorted(found)
    return out


def _walk(org: Any, root: str) -> set[str]:
    found: set[str] = set()
    pending, seen = [root], {root}
    while pending:
        parent = pending.pop()
        found.update(
            a["Id"] for a in _paged(org, "list_accounts_for_parent", ParentId=parent) if _active(a)
        )
        children = _paged(org, "list_children", ParentId=parent, ChildType="ORGANIZATIONAL_UNIT")
        for child in children:
            if child["Id"] not in seen:
                seen.add(child["Id"])
                pending.append(child["Id"])
    return found


def _paged(org: Any, operation: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
    key = "Children" if operation == "list_children" else "Accounts"
    for page in org.get_paginator(operation).paginate(**kwargs):
        yield from page.get(key, ())


def _active(account: dict[str, Any]) -> bool:
    """``State`` (2025 on) or the older ``Status``: only ACTIVE accounts run anything."""
    return str(account.get("State") or account.get("Status") or "") == ACTIVE


def _why(exc: ClientError | BotoCoreError) -> str:
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        return f"{err.get('Code', 'error')}: {err.get('Message', '')}".rstrip(": ")
    return str(exc)


def member_role_arn(partition: str, account: str, role_name: str) -> str:
    """``arn:aws:iam::111122223333:role/gpuplan-reader`` (a path may lead the name)."""
    return f"arn:{partition}:iam::{account}:role/{role_name}"
