"""Judge a ModelReplica document: metadata, the CRD (structure, then its CEL rules), then the checks beyond it.

- `metadata`: what the API server checks of any object's metadata;
- `structural`: the CRD's OpenAPI schema, as the API server applies it (defaults included);
- `cel`: the CRD's `x-kubernetes-validations`, one predicate per rule;
- `selectors`: the DRA selector expressions, compiled as the API server compiles the claim template's;
- `beyond_crd`: what the CRD does not say but the output needs (names that fit, ports, flags).
"""

from __future__ import annotations

from typing import Any, Optional

from .. import crd
from ..errors import Finding
from ..model import ModelReplica, from_validated
from ..yamlio.document import Document
from .beyond_crd import check_replica
from .cel import make_rule_runner
from .metadata import check_metadata
from .selectors import check_selectors
from .structural import StructuralValidator


def judge_replica(document: Document, namespace: Optional[str]) -> tuple[Optional[Any], list[Finding]]:
    """The validated ModelReplica model, or every error this document has."""
    errors: list[Finding] = []
    check_metadata(document, errors)
    validator = StructuralValidator(document, errors, make_rule_runner(document))
    data = validator.check(document.data, crd.openapi_schema(), ())
    check_selectors(document, errors)
    if errors:
        return None, errors
    # A null field is an absent one, as the API server drops it (`labels:` with nothing after it).
    metadata = {k: v for k, v in data["metadata"].items() if v is not None}
    replica = from_validated(ModelReplica, {"metadata": metadata, "spec": data["spec"]})
    errors = check_replica(replica, document, namespace)
    return (None, errors) if errors else (replica, [])
