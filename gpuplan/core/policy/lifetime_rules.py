"""Rules across keys for ``lifetimes``, ``exemptions`` and ``owners`` (:mod:`~gpuplan.core.
policy.lifetime_settings`): each a key path and a message, made into policy problems by
:func:`gpuplan.core.policy.rules.check_rules`."""

from __future__ import annotations

from gpuplan.core.policy.models import Policy

ENV_PREFIX = "GPUPLAN_"

Found = tuple[tuple[str | int, ...], str]


def lifetime_rules(policy: Policy) -> list[Found]:
    """Problems of the three sections; empty when consistent."""
    out: list[Found] = []
    if policy.lifetimes.stopped_for_days and not policy.idle.allow_data_loss:
        out.append(
            (
                ("lifetimes", "stopped_for_days"),
                "stopped_for snapshots the disks, then terminates the instance; set "
                "idle.allow_data_loss: true to allow it",
            )
        )
    owners = policy.owners
    allowed = set(policy.env_allow)
    names: list[tuple[tuple[str | int, ...], str | None]] = []
    for who, dest in owners.destinations.items():
        here = ("owners", "destinations", who)
        names += [
            ((*here, "webhook_env"), dest.webhook_env),
            ((*here, "slack_env"), dest.slack_env),
        ]
    if owners.smtp is not None:
        names.append((("owners", "smtp", "password_env"), owners.smtp.password_env))
        if owners.smtp.tls == "none" and not owners.allow_insecure:
            out.append(
                (
                    ("owners", "smtp", "tls"),
                    "tls: none sends mail (and the password) in the clear; allowed only with "
                    "owners.allow_insecure: true, to a loopback relay",
                )
            )
    for path, name in names:
        if name is not None and not name.startswith(ENV_PREFIX) and name not in allowed:
            out.append(
                (path, f"{name} may not be read: only {ENV_PREFIX}* names or names in env_allow")
            )
    return out
