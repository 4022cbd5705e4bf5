"""The real RBAC authorizer judges the picker's Role: its ServiceAccount may do all the picker does.

A kube-apiserver with --authorization-mode=RBAC, the CRDs the picker watches installed, and each
valid fixture's ServiceAccount, Role and RoleBinding created for real; then a SubjectAccessReview
asks, as the picker's ServiceAccount, for every verb on every resource the picker uses
(llm-d-router v0.9.0: pkg/epp/server/controller_manager.go caches), and nothing it does not: without leader election it
writes nothing. One refused watch is enough to keep the picker from ever being Ready (docs/design.md: the endpoint picker).
"""

from __future__ import annotations

from typing import Any

import pytest
from test_serving import PICKER_WATCHES

from conftest import VALID
from modelplane_render.options import Options
from modelplane_render.pipeline import render_paths

pytestmark = pytest.mark.real_peers

WATCHES = PICKER_WATCHES
# Without leader election the picker writes nothing: no Lease, no Event. Nor may it.
NEVER = [("coordination.k8s.io", "leases", "create"), ("", "events", "create"), ("", "pods", "update")]


def allowed(api: Any, user: str, namespace: str, group: str, resource: str, verb: str) -> bool:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": user,
            "groups": ["system:serviceaccounts"],
            "resourceAttributes": {"namespace": namespace, "group": group, "resource": resource, "verb": verb},
        },
    }
    status, body, _ = api.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
    assert status == 201, body
    return bool(body["status"].get("allowed"))


@pytest.mark.parametrize("case", VALID, ids=[p.name for p in VALID])
def test_the_pickers_service_account_may_do_all_the_picker_does(rbac_api, case):  # type: ignore[no-untyped-def]
    objects = render_paths([str(case)], Options()).objects
    for obj in objects:
        if obj["kind"] in ("ServiceAccount", "Role", "RoleBinding"):
            namespace = obj["metadata"]["namespace"]
            rbac_api.create_namespace(namespace)
            status, body, _ = rbac_api.request("POST", rbac_api.collection_path(obj["apiVersion"], obj["kind"], namespace), obj)
            assert status in (201, 409), body
    accounts = [o for o in objects if o["kind"] == "ServiceAccount"]
    assert accounts
    for account in accounts:
        namespace, name = account["metadata"]["namespace"], account["metadata"]["name"]
        user = f"system:serviceaccount:{namespace}:{name}"
        asks = [(g, r, v) for g, r in WATCHES for v in ("list", "watch")]
        refused = [ask for ask in asks if not allowed(rbac_api, user, namespace, *ask)]
        assert refused == [], f"{user} may not {refused}"
        assert [ask for ask in NEVER if allowed(rbac_api, user, namespace, *ask)] == []
        # And no more than its own namespace: the Role is not a ClusterRole.
        assert not allowed(rbac_api, user, "kube-system", "", "pods", "list")
