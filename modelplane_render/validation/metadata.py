"""What the API server checks of any object's metadata (ObjectMeta), on create."""

from __future__ import annotations

import re
from typing import Any

from .. import names
from ..errors import FieldPath, Finding, MapKey, describe, quoted, unknown_field
from ..yamlio.document import Document

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
    check_object_meta_fields(document, meta, errors)
    if "generateName" in meta:
        errors.append(
            document.error(("metadata", "generateName"), "not supported: GitOps needs a fixed name; set metadata.name", at_key=True)
        )
    name = meta.get("name")
    if name is None:
        errors.append(document.error(("metadata", "name"), "required field is missing"))
    elif not isinstance(name, str):
        why = document.reads_as(("metadata", "name"))
        errors.append(
            document.error(("metadata", "name"), f"must be a string: {why}" if why else f"must be a string, not {describe(name)}")
        )
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
            if not names.is_qualified_name(key):
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


# ObjectMeta's other fields as Go decodes them (k8s.io/apimachinery meta/v1): a value of another type is
# refused before any rule runs ("cannot unmarshal number into Go struct field ObjectMeta.uid"), and so is
# an unknown field of an owner reference or a managedFields entry (strict decoding); a null leaves a field
# unset. The server then resets generation, uid, creationTimestamp and managedFields on create.
_STRING, _INTEGER, _BOOLEAN, _TIME, _ANY = "string", "integer", "boolean", "time", "any"
_SCALAR_FIELDS = {
    "uid": _STRING,
    "resourceVersion": _STRING,
    "selfLink": _STRING,
    "generateName": _STRING,
    "generation": _INTEGER,
    "deletionGracePeriodSeconds": _INTEGER,
    "creationTimestamp": _TIME,
    "deletionTimestamp": _TIME,
}
_OWNER_REFERENCE = {
    "apiVersion": _STRING,
    "kind": _STRING,
    "name": _STRING,
    "uid": _STRING,
    "controller": _BOOLEAN,
    "blockOwnerDeletion": _BOOLEAN,
}
_OWNER_REQUIRED = ("apiVersion", "kind", "name", "uid")
_MANAGED_FIELDS_ENTRY = {
    "manager": _STRING,
    "operation": _STRING,
    "apiVersion": _STRING,
    "time": _TIME,
    "fieldsType": _STRING,
    "fieldsV1": _ANY,
    "subresource": _STRING,
}
# metav1.Time reads RFC 3339 (Go's time.RFC3339: fractional seconds allowed, a `T`, `Z` or a numeric offset).
_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))\Z")
_INT64 = 1 << 63


def check_object_meta_fields(document: Document, meta: dict[str, Any], errors: list[Finding]) -> None:
    """Types of ObjectMeta's other fields, and what ValidateObjectMeta checks of ownerReferences and finalizers."""
    for key, kind in _SCALAR_FIELDS.items():
        if meta.get(key) is not None:
            _check_type(document, ("metadata", key), meta[key], kind, errors)
    if meta.get("ownerReferences") is not None:
        check_owner_references(document, meta["ownerReferences"], errors)
    if meta.get("finalizers") is not None:
        _check_finalizers(document, meta["finalizers"], errors)
    entries = meta.get("managedFields")
    if entries is not None:
        for i, entry in _items(document, ("metadata", "managedFields"), entries, errors):
            _check_struct(document, ("metadata", "managedFields", i), entry, _MANAGED_FIELDS_ENTRY, errors)


def check_owner_references(document: Document, references: Any, errors: list[Finding]) -> None:
    """ValidateOwnerReferences (apimachinery v0.37 objectmeta.go): apiVersion, kind, name and uid set,
    apiVersion a group/version, no v1 Event as owner, at most one controller."""
    where: FieldPath = ("metadata", "ownerReferences")
    controller = None
    for i, reference in _items(document, where, references, errors):
        path = where + (i,)
        if reference is None:
            errors.append(document.error(path, "must be an owner reference: apiVersion, kind, name and uid (it is empty)"))
            continue
        if not _check_struct(document, path, reference, _OWNER_REFERENCE, errors):
            continue
        for key in _OWNER_REQUIRED:
            if key not in reference:
                errors.append(
                    document.error(
                        path + (key,), f"required field is missing: an owner reference names its owner by {', '.join(_OWNER_REQUIRED)}"
                    )
                )
            elif not reference[key]:
                errors.append(
                    document.error(path + (key,), "must not be empty" if reference[key] == "" else "must have a value (it is empty)")
                )
        api_version, kind = reference.get("apiVersion"), reference.get("kind")
        if api_version:
            group, _, version = api_version.rpartition("/") if "/" in api_version else ("", "", api_version)
            if api_version.count("/") > 1 or not version:
                errors.append(
                    document.error(
                        path + ("apiVersion",), f"must be <group>/<version> or <version> (such as apps/v1 or v1), not {quoted(api_version)}"
                    )
                )
            elif group == "" and version == "v1" and kind == "Event":
                errors.append(
                    document.error(
                        path + ("kind",), "a v1 Event can't be an owner: the API server refuses it; name the object that owns this one"
                    )
                )
        if reference.get("controller") is True:
            if controller is None:
                controller = i
            else:
                errors.append(
                    document.error(
                        path + ("controller",), f"only one owner reference may be the controller: ownerReferences[{controller}] already is"
                    )
                )


def _check_finalizers(document: Document, finalizers: Any, errors: list[Finding]) -> None:
    where: FieldPath = ("metadata", "finalizers")
    seen: set[str] = set()
    for i, name in _items(document, where, finalizers, errors, mappings=False):
        if name is not None and not isinstance(name, str):
            _check_type(document, where + (i,), name, _STRING, errors)
        elif not name or not names.is_qualified_name(name):
            shown = quoted(name) if name else "empty"
            errors.append(
                document.error(
                    where + (i,),
                    "a finalizer must be a qualified name (an optional DNS prefix and '/', then at most 63 letters, digits, '-', '_' or '.', "
                    f"such as example.com/cleanup), not {shown}",
                )
            )
        if isinstance(name, str):
            seen.add(name)
    if {"orphan", "foregroundDeletion"} <= seen:
        errors.append(document.error(where, "must not hold both orphan and foregroundDeletion: they ask for opposite deletions; keep one"))


def _items(document: Document, path: FieldPath, value: Any, errors: list[Finding], *, mappings: bool = True) -> list[tuple[int, Any]]:
    """The entries of a list field (a type error for anything else); with mappings, an entry must be a mapping or null."""
    if not isinstance(value, list):
        errors.append(document.error(path, f"must be a list, not {describe(value)}"))
        return []
    found = []
    for i, item in enumerate(value):
        if mappings and item is not None and not isinstance(item, dict):
            errors.append(document.error(path + (i,), f"must be a mapping, not {describe(item)}"))
        else:
            found.append((i, item))
    return found


def _check_struct(document: Document, path: FieldPath, value: Any, fields: dict[str, str], errors: list[Finding]) -> bool:
    """A mapping of the Go struct `fields` describes: no unknown key (even a null one), each value of its type."""
    if value is None:
        return True
    before = len(errors)
    for key, child in value.items():
        kind = fields.get(key)
        if kind is None:
            errors.append(document.error(path + (key,), unknown_field(key, sorted(fields)), at_key=True))
        elif child is not None:
            _check_type(document, path + (key,), child, kind, errors)
    return len(errors) == before


def _check_type(document: Document, path: FieldPath, value: Any, kind: str, errors: list[Finding]) -> None:
    if kind == _ANY:
        return
    if kind == _INTEGER:
        if isinstance(value, float) and value.is_integer() and abs(value) < _INT64:
            return
        if isinstance(value, int) and not isinstance(value, bool):
            return
        errors.append(document.error(path, f"must be an integer, not {describe(value)}"))
        return
    wanted = bool if kind == _BOOLEAN else str
    if not isinstance(value, wanted):
        why = document.reads_as(path)
        if why and kind != _BOOLEAN:
            errors.append(document.error(path, f"must be a string: {why}"))
        else:
            noun = "a boolean (true or false)" if kind == _BOOLEAN else "a string"
            hint = ": quote the value" if kind != _BOOLEAN and isinstance(value, (bool, int, float)) else ""
            errors.append(document.error(path, f"must be {noun}, not {describe(value)}{hint}"))
        return
    if kind == _TIME and isinstance(value, str) and not _is_rfc3339(value):
        errors.append(document.error(path, f"must be a time in RFC 3339 form, such as 2026-01-02T15:04:05Z, not {quoted(value)}"))


def _is_rfc3339(text: str) -> bool:
    match = _RFC3339.match(text)
    if match is None:
        return False
    year, month, day, hour, minute, second = (int(match.group(g)) for g in range(1, 7))
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    if not (1 <= month <= 12 and 1 <= day <= days[month - 1] and hour <= 23 and minute <= 59 and second <= 59):
        return False
    return match.group(8) == "Z" or (int(match.group(9)) <= 23 and int(match.group(10)) <= 59)
