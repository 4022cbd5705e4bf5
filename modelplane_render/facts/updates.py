"""What the API server (and LWS's webhook) refuse to change in place: an update that touches one of these
fails, and Argo CD's sync with it, until the object is deleted and created again.

Each with where it is enforced, at the versions the project pins (kube-apiserver v1.37.2, LWS v0.10.0).
tests/test_day_two.py applies every kind of edit to the real API server; this table is what `diff` warns of.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

from .. import constants as c


def _at(obj: dict[str, Any], *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)  # type: ignore[assignment]
    return obj


def _field(*path: str) -> Callable[[dict[str, Any], dict[str, Any]], Optional[str]]:
    def changed(before: dict[str, Any], after: dict[str, Any]) -> Optional[str]:
        return ".".join(path) if _at(before, *path) != _at(after, *path) else None

    return changed


def _set_field(*path: str) -> Callable[[dict[str, Any], dict[str, Any]], Optional[str]]:
    """Immutable once set: a value the server assigned (clusterIP) may be left out, not changed."""

    def changed(before: dict[str, Any], after: dict[str, Any]) -> Optional[str]:
        old, new = _at(before, *path), _at(after, *path)
        return ".".join(path) if old is not None and new is not None and old != new else None

    return changed


def _claim_spec(before: dict[str, Any], after: dict[str, Any]) -> Optional[str]:
    """The spec as the server compares it, defaults written: a request that says no allocationMode is ExactCount
    (k8s pkg/apis/resource/v1 defaults), so writing it out changes nothing."""
    return "spec" if _defaulted(_at(before, "spec")) != _defaulted(_at(after, "spec")) else None


def _defaulted(spec: Any) -> Any:
    requests = _at(spec, "spec", "devices", "requests")
    if not isinstance(requests, list):
        return spec
    written = [
        {**r, "exactly": {"allocationMode": c.DEFAULT_ALLOCATION_MODE, **r["exactly"]}}
        if isinstance(r, dict) and isinstance(r.get("exactly"), dict)
        else r
        for r in requests
    ]
    return {**spec, "spec": {**spec["spec"], "devices": {**spec["spec"]["devices"], "requests": written}}}


def _became_immutable(before: dict[str, Any], after: dict[str, Any]) -> Optional[str]:
    return "data (the object is immutable: true)" if before.get("immutable") is True and before != after else None


# kind -> the checks of an update; each returns the field it refuses, or None.
IMMUTABLE: dict[str, tuple[tuple[Callable[[dict[str, Any], dict[str, Any]], Optional[str]], str], ...]] = {
    # k8s pkg/apis/resource/validation/validation.go ValidateResourceClaimTemplateUpdate
    "ResourceClaimTemplate": ((_claim_spec, "kube-apiserver: a ResourceClaimTemplate's spec is immutable"),),
    # k8s pkg/apis/rbac/validation/validation.go ValidateRoleBindingUpdate
    "RoleBinding": ((_field("roleRef"), "kube-apiserver: a RoleBinding's roleRef is immutable"),),
    # k8s pkg/apis/apps/validation/validation.go ValidateDeploymentUpdate (apps/v1)
    "Deployment": ((_field("spec", "selector"), "kube-apiserver: a Deployment's spec.selector is immutable"),),
    # k8s pkg/apis/core/validation/validation.go ValidateServiceUpdate
    "Service": ((_set_field("spec", "clusterIP"), "kube-apiserver: a Service's spec.clusterIP is immutable once set"),),
    # k8s ValidateConfigMapUpdate / ValidateSecretUpdate
    "ConfigMap": ((_became_immutable, "kube-apiserver: an immutable ConfigMap can't change"),),
    "Secret": ((_became_immutable, "kube-apiserver: an immutable Secret can't change"),),
    # LWS pkg/webhooks/leaderworkerset_webhook.go ValidateUpdate
    "LeaderWorkerSet": (
        (
            _field("spec", "leaderWorkerTemplate", "subGroupPolicy", "subGroupSize"),
            "LWS webhook: leaderWorkerTemplate.subGroupPolicy.subGroupSize is immutable",
        ),
    ),
}


def refused_update(kind: str, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Why the update of an object from `before` to `after` would be refused: one reason per immutable field changed."""
    return [why for check, why in IMMUTABLE.get(kind, ()) if check(before, after)]
