"""What the API server checks of any object's metadata, for the fields a replica uses."""

from __future__ import annotations

from typing import Any

from .. import names
from ..errors import Finding, MapKey
from ..yamlio.document import Document
from .structural import describe, unknown_field

# ObjectMeta fields a manifest in git may carry; the renderer reads name, namespace, labels, annotations.
_METADATA_FIELDS = frozenset(
    {
        "name",
        "namespace",
        "labels",
        "annotations",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "finalizers",
        "ownerReferences",
        "managedFields",
        "selfLink",
        "generateName",
    }
)


def check_metadata(document: Document, errors: list[Finding]) -> None:
    """What the API server checks of any object's metadata, for the fields a replica uses."""
    meta = document.data.get("metadata")
    if meta is None:
        errors.append(document.error(("metadata",), "required field is missing"))
        return
    if not isinstance(meta, dict):
        errors.append(document.error(("metadata",), "must be a mapping"))
        return
    for key in meta:
        if key not in _METADATA_FIELDS:
            errors.append(document.error(("metadata", key), unknown_field(key, sorted(_METADATA_FIELDS)), at_key=True))
    if "generateName" in meta:
        errors.append(
            document.error(("metadata", "generateName"), "not supported: GitOps needs a fixed name; set metadata.name", at_key=True)
        )
    name = meta.get("name")
    if name is None:
        errors.append(document.error(("metadata", "name"), "required field is missing"))
    elif not isinstance(name, str):
        errors.append(document.error(("metadata", "name"), "must be a string"))
    elif len(name) > names.DNS_SUBDOMAIN_MAX or not names.DNS_1123_SUBDOMAIN.match(name):
        errors.append(document.error(("metadata", "name"), "must be a DNS subdomain: at most 253 lowercase letters, digits, '-' and '.'"))
    namespace = meta.get("namespace")
    if namespace is not None and (not isinstance(namespace, str) or not names.is_dns_label(namespace)):
        errors.append(document.error(("metadata", "namespace"), "must be a DNS label: at most 63 lowercase letters, digits and '-'"))
    for field, check_value in (("labels", True), ("annotations", False)):
        entries = meta.get(field)
        if entries is None:
            continue
        if not isinstance(entries, dict):
            errors.append(document.error(("metadata", field), "must be a mapping of strings to strings"))
            continue
        for key, value in entries.items():
            path = ("metadata", field, MapKey(key))
            if len(key.split("/")[0]) > names.DNS_SUBDOMAIN_MAX or not names.QUALIFIED_NAME.match(key):
                errors.append(
                    document.error(
                        path,
                        f"{field[:-1]} key must be a qualified name (an optional DNS prefix and '/', then at most 63 letters, digits, '-', '_' or '.')",
                        at_key=True,
                    )
                )
            if not isinstance(value, str):
                why = document.reads_as(path)
                message = f"must be a string: {why}" if why else f"must be a string, not {describe(value)}: quote the value"
                errors.append(document.error(path, message))
            elif check_value and (len(value) > names.LABEL_VALUE_MAX or not names.LABEL_VALUE.match(value)):
                errors.append(
                    document.error(
                        path,
                        "must be a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
                    )
                )
        if field == "annotations" and _annotation_bytes(entries) > MAX_ANNOTATION_BYTES:
            errors.append(
                document.error(
                    ("metadata", field),
                    f"too long: keys and values together must be at most {MAX_ANNOTATION_BYTES} bytes (256 KiB), as the API server requires",
                )
            )


# The API server's limit on all of an object's annotations, keys and values in UTF-8. It matters
# more here than on the replica itself: its annotations are copied onto every object it renders.
MAX_ANNOTATION_BYTES = 256 * 1024


def _annotation_bytes(entries: dict[Any, Any]) -> int:
    return sum(len(str(k).encode("utf-8", "surrogatepass")) + len(str(v).encode("utf-8", "surrogatepass")) for k, v in entries.items())
