"""Wire fakes of the two cost APIs without a moto backend: BigQuery's ``jobs.query`` /
``jobs.getQueryResults`` (the billing export) and Azure Cost Management ``query``.

Served by :mod:`tests.fakes.http`, so the real clients (google-cloud-bigquery over
``requests``; azure-core's pipeline) run unchanged. Answers follow the recorded shapes:
BigQuery returns ``schema.fields`` and ``rows[].f[].v`` as strings, a ``pageToken``
when more rows follow; Cost Management returns ``properties.columns`` and ``rows``
(``UsageDate`` as a number), with an absolute ``nextLink`` when more follow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.fakes.http import FakeApi, Reply, Request

BQ = r"/bigquery/v2/projects/(?P<project>[^/]+)"


@dataclass
class BigQueryFake(FakeApi):
    fields: list[tuple[str, str]] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    page_size: int = 5
    queries: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.route("POST", BQ + r"/queries", "jobs.query", self._query)
        self.route("GET", BQ + r"/queries/(?P<job>[^/]+)", "jobs.getQueryResults", self._results)
        self.route("GET", BQ + r"/jobs/(?P<job>[^/]+)", "jobs.get", self._job)

    def _page(self, start: int) -> dict[str, Any]:
        chunk = self.rows[start : start + self.page_size]
        page: dict[str, Any] = {
            "schema": {"fields": [{"name": n, "type": t, "mode": "NULLABLE"}
                                  for n, t in self.fields]},
            "jobReference": {"projectId": "billing-proj", "jobId": "job_1", "location": "US"},
            "totalRows": str(len(self.rows)),
            "rows": [{"f": [{"v": None if v is None else str(v)} for v in row]} for row in chunk],
            "jobComplete": True,
        }  # fmt: skip
        if start + self.page_size < len(self.rows):
            page["pageToken"] = str(start + self.page_size)
        return page

    def _query(self, request: Request, project: str) -> Reply:
        self.queries.append(request.json())
        return 200, {}, {"kind": "bigquery#queryResponse", **self._page(0)}

    def _job(self, request: Request, project: str, job: str) -> Reply:
        query = self.queries[-1] if self.queries else {}
        return 200, {}, {
            "kind": "bigquery#job", "id": f"{project}:US.{job}",
            "jobReference": {"projectId": project, "jobId": job, "location": "US"},
            "configuration": {"query": {"query": query.get("query", ""),
                                        "useLegacySql": False}, "jobType": "QUERY"},
            "status": {"state": "DONE"},
            "statistics": {"creationTime": "1764547200000", "query": {}},
        }  # fmt: skip

    def _results(self, request: Request, project: str, job: str) -> Reply:
        start = int(request.query.get("pageToken", "0"))
        return 200, {}, {"kind": "bigquery#getQueryResultsResponse", **self._page(start)}


COST = r"/subscriptions/(?P<sub>[^/]+)/providers/Microsoft\.CostManagement/query"


@dataclass
class CostManagementFake(FakeApi):
    answers: dict[str, tuple[list[str], list[list[Any]]]] = field(default_factory=dict)
    """First grouping's name (``TagKey``'s tag is ``TagKey``) -> (columns, rows)."""
    page_size: int = 3
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.require_bearer = True
        self.route("POST", COST, "costManagement.query", self._query)

    def _query(self, request: Request, sub: str) -> Reply:
        body = request.json()
        self.bodies.append(body)
        first = body["dataset"]["grouping"][0]
        key = "TagKey" if first["type"] == "TagKey" else first["name"]
        columns, rows = self.answers.get(key, (["Cost", "UsageDate", "Currency"], []))
        start = int(request.query.get("skiptoken", "0"))
        chunk = rows[start : start + self.page_size]
        nxt = None
        if start + self.page_size < len(rows):
            nxt = (f"{request.base_url}{request.path}?api-version=2023-03-01"
                   f"&skiptoken={start + self.page_size}")  # fmt: skip
        props = {"nextLink": nxt, "columns": [{"name": c, "type": "String"} for c in columns],
                 "rows": chunk}  # fmt: skip
        return 200, {}, {"id": f"/subscriptions/{sub}/providers/Microsoft.CostManagement/query/1",
                         "type": "Microsoft.CostManagement/query", "properties": props}  # fmt: skip
