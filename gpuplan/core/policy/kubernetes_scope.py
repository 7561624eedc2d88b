"""The policy's ``scope.kubernetes`` section: which clusters, namespaces and pods a policy
governs (the registry's Kubernetes entry names this model; checked like every section)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, WithJsonSchema, model_validator

from gpuplan.core.policy.fields import _text
from gpuplan.core.policy.section import Section

_NAME = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
_KEY = r"^([a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$"
_VALUE = r"^([A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)?$"
_CONTEXT = r"^\S{1,253}$"

K8sName = Annotated[
    str,
    _text(_NAME, "a namespace name (lowercase letters, digits and '-', at most 63)"),
    WithJsonSchema({"type": "string", "pattern": _NAME}),
]
"""A Kubernetes namespace name (DNS label)."""
LabelKey = Annotated[
    str,
    _text(_KEY, "a label or annotation key (team, gpuplan.io/opt-out)"),
    WithJsonSchema({"type": "string", "pattern": _KEY}),
]
LabelValue = Annotated[
    str,
    _text(_VALUE, "a label value (letters, digits, '-', '_' and '.', at most 63)"),
    WithJsonSchema({"type": "string", "pattern": _VALUE}),
]
ContextName = Annotated[
    str,
    _text(_CONTEXT, "a kubeconfig context name (no spaces)"),
    WithJsonSchema({"type": "string", "pattern": _CONTEXT}),
]
PROTECTED = ("kube-system",)


class KubernetesScope(Section):
    """Kubernetes clusters whose GPU workloads this policy governs (docs/kubernetes.md)."""

    contexts: list[ContextName] = Field(default_factory=list)
    """kubeconfig contexts, one scope each; empty: the kubeconfig's current context."""
    kubeconfig: str | None = Field(default=None, min_length=1, max_length=4096)
    """The kubeconfig file; default: ``$KUBECONFIG``, else ``~/.kube/config``."""
    in_cluster: bool = False
    """Use the pod's service account (gpuplan running inside the cluster)."""
    namespaces: list[K8sName] = Field(default_factory=list)
    """Namespaces to survey; empty: every namespace."""
    exclude_namespaces: list[K8sName] = Field(default_factory=list)
    """Namespaces left out of the survey (never listed, never touched)."""
    protected_namespaces: list[K8sName] = Field(default_factory=lambda: list(PROTECTED))
    """Namespaces listed and priced but never acted on; ``kube-system`` always is."""
    match_labels: dict[LabelKey, LabelValue] = Field(default_factory=dict)
    """Only pods with these labels (a label selector, ``team: research``)."""
    opt_out: LabelKey = "gpuplan.io/opt-out"
    """A pod label or annotation (any value) that opts a workload out of every action."""
    page_size: int = Field(default=500, ge=1, le=5000)
    """Objects per list call (``limit``; ``continue`` pages through the rest)."""
    metrics_labels: dict[LabelKey, LabelValue] = Field(default_factory=dict)
    """Label matchers added to every Prometheus query (``cluster: prod`` where one
    Prometheus scrapes several clusters; pods are matched by namespace and name only)."""

    @model_validator(mode="after")
    def _one_source(self) -> KubernetesScope:
        if self.in_cluster and (self.contexts or self.kubeconfig):
            raise ValueError("in_cluster uses the service account: no contexts or kubeconfig")
        return self

    @property
    def protected(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*PROTECTED, *self.protected_namespaces)))
