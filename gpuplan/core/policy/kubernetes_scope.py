"""The policy's ``scope.kubernetes`` section: which clusters, namespaces and pods a policy
governs (the registry's Kubernetes entry names this model; checked like every section)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints, model_validator

from gpuplan.core.policy.section import Section

K8sName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")]
"""A Kubernetes namespace name (DNS label)."""
LabelKey = Annotated[
    str,
    StringConstraints(
        pattern=r"^([a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$"
    ),
]
"""A label or annotation key (``team``, ``gpuplan.io/opt-out``)."""
LabelValue = Annotated[
    str, StringConstraints(pattern=r"^([A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)?$")
]
ContextName = Annotated[str, StringConstraints(min_length=1, max_length=253, pattern=r"^[^\s]+$")]
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
