"""Every kind the output holds, in one list: its API, its template, where it goes in the output, and
what a cluster needs to serve it.

Adding an output kind is a row here, a template in templates/, and the plan's call that adds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from . import constants as c


@dataclass(frozen=True)
class OutputKind:
    kind: str
    api_version: str
    template: str
    # What the destination cluster needs to serve it, when that is not in every cluster.
    remedy: Optional[str] = None


SERVICE_ACCOUNT = OutputKind("ServiceAccount", "v1", "serviceaccount.yaml.j2")
ROLE = OutputKind("Role", "rbac.authorization.k8s.io/v1", "role.yaml.j2")
ROLE_BINDING = OutputKind("RoleBinding", "rbac.authorization.k8s.io/v1", "rolebinding.yaml.j2")
CONFIG_MAP = OutputKind("ConfigMap", "v1", "configmap.yaml.j2")
RESOURCE_CLAIM_TEMPLATE = OutputKind(
    "ResourceClaimTemplate",
    c.DRA_API,
    "resourceclaimtemplate.yaml.j2",
    "DRA v1 is served from Kubernetes 1.34: upgrade the cluster to >= 1.34",
)
SERVICE = OutputKind("Service", "v1", "service.yaml.j2")
LEADER_WORKER_SET = OutputKind("LeaderWorkerSet", c.LWS_API, "leaderworkerset.yaml.j2", "install LeaderWorkerSet (LWS) >= v0.7")
DEPLOYMENT = OutputKind("Deployment", "apps/v1", "deployment.yaml.j2")
INFERENCE_POOL = OutputKind("InferencePool", c.POOL_API, "inferencepool.yaml.j2", "install the Gateway API Inference Extension v1 CRDs")
HTTP_ROUTE = OutputKind("HTTPRoute", c.ROUTE_API, "httproute.yaml.j2", "install the Gateway API v1 CRDs")

# Every kind the plan renders, the rows above (argocd appproject allows exactly these): a new row is in it.
OUTPUT_KINDS = tuple(row for row in tuple(globals().values()) if isinstance(row, OutputKind))

# Output order, dependencies first: identities and config, then claims, then what serves, then
# what routes. Kinds the plan never renders are here for objects passed through.
ORDER = (
    "Namespace",
    "CustomResourceDefinition",
    SERVICE_ACCOUNT.kind,
    "Secret",
    CONFIG_MAP.kind,
    ROLE.kind,
    "ClusterRole",
    ROLE_BINDING.kind,
    "ClusterRoleBinding",
    "PersistentVolumeClaim",
    RESOURCE_CLAIM_TEMPLATE.kind,
    SERVICE.kind,
    LEADER_WORKER_SET.kind,
    DEPLOYMENT.kind,
    "StatefulSet",
    "PodDisruptionBudget",
    INFERENCE_POOL.kind,
    HTTP_ROUTE.kind,
)

# Kinds whose removal deletes running pods: the reason a rename deserves a note in a diff.
WORKLOAD_KINDS = frozenset({LEADER_WORKER_SET.kind, DEPLOYMENT.kind, "StatefulSet"})

# The APIs our rendered objects use that a cluster may lack, and what to install for each, in the
# order an error names them: what serves (LWS), what it claims (DRA), then what routes.
API_REMEDIES = {
    k.api_version: k.remedy for k in (LEADER_WORKER_SET, RESOURCE_CLAIM_TEMPLATE, INFERENCE_POOL, HTTP_ROUTE) if k.remedy is not None
}
