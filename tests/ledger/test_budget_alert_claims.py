"""Budget alerts are claimed before they are sent: of two runs at once one sends; a
failed send gives the claim back; a dead run's claim expires; old rows read as sent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gpuplan.core.audit.alerts import AlertClaim
from gpuplan.ledger import Ledger
from gpuplan.ledger.budget_alerts import (
    claim_budget_alert,
    confirm_budget_alert,
    release_budget_alert,
)

AT = datetime(2026, 12, 11, tzinfo=UTC)
KEY = ("team-a", "2026-12", 80.0)


def test_one_claim_holds_and_sent_is_for_good(location: str) -> None:
    with Ledger(location) as one, Ledger(location) as two:
        until = AT + timedelta(minutes=15)
        assert claim_budget_alert(one, *KEY, token="a", at=AT, until=until) is None
        assert claim_budget_alert(two, *KEY, token="b", at=AT, until=until) is AlertClaim.CLAIMED
        assert not two.alert_sent(*KEY)  # a live claim is not a send
        assert confirm_budget_alert(one, *KEY, token="a", at=AT)
        assert two.alert_sent(*KEY)
        later = AT + timedelta(days=1)
        assert claim_budget_alert(two, *KEY, token="b", at=later, until=later) is AlertClaim.SENT


def test_a_failed_send_releases_and_a_dead_claim_expires(location: str) -> None:
    with Ledger(location) as ledger:
        until = AT + timedelta(minutes=15)
        assert claim_budget_alert(ledger, *KEY, token="a", at=AT, until=until) is None
        release_budget_alert(ledger, *KEY, token="a")
        assert claim_budget_alert(ledger, *KEY, token="b", at=AT, until=until) is None
        # b dies holding it; after the expiry c may send, and b's late confirm fails.
        after = until + timedelta(seconds=1)
        assert claim_budget_alert(ledger, *KEY, token="c", at=after, until=after) is None
        assert not confirm_budget_alert(ledger, *KEY, token="b", at=after)
        assert confirm_budget_alert(ledger, *KEY, token="c", at=after)


def test_rows_marked_the_old_way_read_as_sent(location: str) -> None:
    with Ledger(location) as ledger:
        assert ledger.mark_alert(*KEY, AT)
        assert ledger.alert_sent(*KEY)
        got = claim_budget_alert(ledger, *KEY, token="x", at=AT, until=AT)
        assert got is AlertClaim.SENT
