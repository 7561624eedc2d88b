"""The Fleet screen's stop: the LIVE / DRY RUN switch and the one-instance stop flow.

Stopping is :func:`gpuplan.usecases.lifecycle.stop_idle.run_stop_idle` on the chosen instance only:
first as a dry run to show the plan, then, once confirmed, for real in LIVE mode (or
recorded as a dry run in DRY RUN mode), under the same lock and into the same ledger as
``gpuplan stop-idle``. :class:`StopActions` is the Fleet screen's base: it holds the
mode, what this session did to each instance, and how problems are reported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from gpuplan.core.errors import GpuplanError
from gpuplan.core.lifecycle.idle import IdleVerdict
from gpuplan.core.lifecycle.plan import Outcome
from gpuplan.tui.confirm import ConfirmScreen
from gpuplan.tui.context import TuiContext
from gpuplan.tui.fleet_view import FleetView
from gpuplan.tui.keys import RoutedScreen
from gpuplan.tui.problems import describe

if TYPE_CHECKING:
    from gpuplan.core.policy import Policy
    from gpuplan.providers.webhook import Notifier
    from gpuplan.usecases.lifecycle.stop_idle import StopIdleResult
    from gpuplan.usecases.lifecycle.survey import Seen


class StopActions(RoutedScreen):
    """``l`` (LIVE / DRY RUN) and ``x`` (stop the selected idle instance)."""

    def __init__(self, context: TuiContext) -> None:
        super().__init__()
        self.context = context
        self.live = False
        self.view: FleetView | None = None
        self.acted: dict[str, Outcome] = {}
        """Instance id -> what this session did to it, shown until a refresh agrees."""
        self.refresh_after_stop = False

    if TYPE_CHECKING:  # given by the Fleet screen

        @property
        def auditing(self) -> bool: ...

        def selected(self) -> Seen | None: ...

        def _draw(self) -> None: ...

        def action_refresh(self) -> None: ...

    # --- dry run / live ----------------------------------------------------------

    def action_toggle_live(self) -> None:
        if self.live:
            self._set_live(False)
            return
        body = Text(
            "In LIVE mode a confirmed stop is carried out on the real instance.\n"
            "In DRY RUN mode it is only planned and recorded in the ledger."
        )
        self.app.push_screen(
            ConfirmScreen("Switch to LIVE?", body, confirm_label="Go live (y)"), self._set_live
        )

    def _set_live(self, live: bool | None) -> None:
        self.live = bool(live)
        mode = self.query_one("#mode", Static)
        mode.update("LIVE" if self.live else "DRY RUN")
        mode.set_class(self.live, "live")
        mode.set_class(not self.live, "dry")

    # --- stop --------------------------------------------------------------------

    def action_stop(self) -> None:
        if self.auditing:
            self.notify("Stops are made from the idle view: press a, then x.", severity="warning")
            return
        seen = self.selected()
        if seen is None or self.view is None:
            self.notify("No instance selected.", severity="warning")
            return
        done = self.acted.get(seen.instance.instance_id)
        if done is not None and done is not Outcome.FAILED:
            self.notify(
                f"{seen.instance.instance_id} is already {done.value}; "
                "the cloud has not caught up yet",
                severity="warning",
            )
            return
        if seen.decision.verdict is not IdleVerdict.IDLE:
            self.notify(
                f"{seen.instance.instance_id} is {seen.decision.verdict.value}, not idle: "
                f"{seen.decision.reason}",
                severity="warning",
            )
            return
        self._status(f"Planning the stop of {seen.instance.instance_id}…")
        self._plan_stop(self.view.policy, seen)

    @work(thread=True, exclusive=True, group="fleet")
    def _plan_stop(self, policy: Policy, seen: Seen) -> None:
        """The use case's dry run on this one instance: what it would do and why."""
        from gpuplan.usecases.lifecycle.stop_idle import run_stop_idle

        try:
            result = run_stop_idle(
                policy,
                [seen.adapter],
                apply=False,
                now=self.context.clock(),
                instance_ids={seen.instance.instance_id},
            )
        except GpuplanError as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        except Exception as exc:  # a bug must not kill the app: it goes to the ! panel
            self.app.call_from_thread(self._failed, describe(exc), exc)
            return
        self.app.call_from_thread(self._confirm_stop, policy, seen, result)

    def _confirm_stop(self, policy: Policy, seen: Seen, plan: StopIdleResult) -> None:
        from gpuplan.tui.fleet_text import plan_text, stop_title, unit_noun

        self._status("Waiting for confirmation…")
        live = self.live
        title = stop_title(seen.instance, live)
        noun = unit_noun(seen.instance)

        def answered(yes: bool | None) -> None:
            if yes:
                self._execute_stop(policy, seen, live)
            else:
                self._status("Stop cancelled; nothing was done.")

        self.app.push_screen(ConfirmScreen(title, plan_text(plan, live, noun)), answered)

    @work(thread=True, exclusive=True, group="fleet")
    def _execute_stop(self, policy: Policy, seen: Seen, live: bool) -> None:
        """Run the use case for real (LIVE) or as a recorded dry run, under the CLI's lock."""
        from gpuplan.usecases.lifecycle.session import run_session
        from gpuplan.usecases.lifecycle.stop_idle import run_stop_idle

        try:
            with run_session(self.context.ledger_path, 5.0) as ledger:
                result = run_stop_idle(
                    policy,
                    [seen.adapter],
                    apply=live,
                    now=self.context.clock(),
                    ledger=ledger,
                    notifier=self._notifier(policy),
                    instance_ids={seen.instance.instance_id},
                )
        except GpuplanError as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        except Exception as exc:  # a bug must not kill the app: it goes to the ! panel
            self.app.call_from_thread(self._failed, describe(exc), exc)
            return
        self.app.call_from_thread(self._stopped, result)

    @staticmethod
    def _notifier(policy: Policy) -> Notifier | None:
        """The policy's webhook, as ``gpuplan stop-idle`` uses it (sent for live runs only)."""
        from gpuplan.providers.webhook import notifier_for

        return notifier_for(policy.notify)

    def _stopped(self, result: StopIdleResult) -> None:
        from gpuplan.tui.fleet_text import acted_outcomes, outcome_message

        message, failed = outcome_message(result)
        if failed:
            self._problem("stop", message)
        else:
            self.notify(message, title="stop")
        self.acted.update(acted_outcomes(result))
        self._draw()  # the row says what was done now, before the cloud catches up
        self._status(message)
        self.refresh_after_stop = True  # once this stop's worker is done: see below

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Re-read the fleet after a stop once the stop's worker has finished. Started from
        inside it, the refresh (same exclusive group) would cancel the stop's own worker."""
        done = event.worker.name == "_execute_stop" and event.state is WorkerState.SUCCESS
        if done and self.refresh_after_stop:
            self.refresh_after_stop = False
            self.action_refresh()

    # --- reporting ---------------------------------------------------------------

    def _status(self, text: str) -> None:
        self.query_one("#status", Static).update(Text(text))

    def _failed(self, message: str, error: BaseException | None = None) -> None:
        for bar in self.query("#progress"):
            bar.display = False  # nothing is being read any more
        self._status(message)
        self._problem("fleet", error or message)

    def _problem(self, source: str, problem: BaseException | str) -> None:
        report = getattr(self.app, "report_problem", None)
        if report is not None:
            report(source, problem)
        else:
            self.notify(str(problem), title=source, severity="error")
