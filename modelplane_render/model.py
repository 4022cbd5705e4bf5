"""Stage 2, model: the models of a ModelReplica, mirroring the CRD field by field.

The CRD (crds/modelreplicas.modelplane.ai.yaml) judges the input; these models are the
typed view the plan reads once it has been judged. They are declared in pydantic's spelling
on records.Record, which builds them without importing pydantic (its import alone was 40% of a
cold render); tests/pydantic_view.py turns each into a real pydantic model, and with those
tests/test_model.py compares every field, type, bound, enum and default with the CRD, so the
two can't drift, and checks that pydantic's validation builds what from_validated builds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar, Literal, Optional, TypeVar, Union, get_args, get_origin

from .records import ConfigDict, Field, Record


class _Strict(Record):
    # What the pydantic models of the tests are held to (tests/pydantic_view.py).
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=True)


_M = TypeVar("_M", bound=Record)
Quantity = Union[int, str]
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


class SecretKeyRef(_Strict):
    name: str
    key: str
    optional: Optional[bool] = None


class ConfigMapKeyRef(_Strict):
    name: str
    key: str
    optional: Optional[bool] = None


class FieldRef(_Strict):
    field_path: str = Field(alias="fieldPath")
    api_version: Optional[str] = Field(None, alias="apiVersion")


class EnvVarSource(_Strict):
    """Exactly one source: the CRD says so with minProperties/maxProperties 1."""

    properties_bounds: ClassVar[tuple[int, int]] = (1, 1)
    secret_key_ref: Optional[SecretKeyRef] = Field(None, alias="secretKeyRef")
    config_map_key_ref: Optional[ConfigMapKeyRef] = Field(None, alias="configMapKeyRef")
    field_ref: Optional[FieldRef] = Field(None, alias="fieldRef")


class EnvVar(_Strict):
    name: str = Field(min_length=1)
    value: Optional[str] = None
    value_from: Optional[EnvVarSource] = Field(None, alias="valueFrom")


class Resources(_Strict):
    limits: Optional[dict[str, Quantity]] = None
    requests: Optional[dict[str, Quantity]] = None


class ContainerPort(_Strict):
    container_port: int = Field(alias="containerPort", ge=1, le=65535)
    name: Optional[str] = Field(None, min_length=1, max_length=15, pattern=DNS_LABEL)


class GrpcAction(_Strict):
    port: int = Field(ge=1, le=65535)
    service: Optional[str] = None


class HttpGetAction(_Strict):
    path: Optional[str] = None
    port: Union[int, str]


class TcpSocketAction(_Strict):
    port: Union[int, str]


class Probe(_Strict):
    failure_threshold: Optional[int] = Field(None, alias="failureThreshold", ge=1)
    grpc: Optional[GrpcAction] = None
    http_get: Optional[HttpGetAction] = Field(None, alias="httpGet")
    initial_delay_seconds: Optional[int] = Field(None, alias="initialDelaySeconds", ge=0)
    period_seconds: Optional[int] = Field(None, alias="periodSeconds", ge=1)
    success_threshold: Optional[int] = Field(None, alias="successThreshold", ge=1)
    tcp_socket: Optional[TcpSocketAction] = Field(None, alias="tcpSocket")
    timeout_seconds: Optional[int] = Field(None, alias="timeoutSeconds", ge=1)


class Container(_Strict):
    name: str = Field(min_length=1, max_length=63, pattern=DNS_LABEL)
    image: str = Field(min_length=1)
    command: Optional[list[str]] = None
    args: Optional[list[str]] = None
    env: Optional[list[EnvVar]] = None
    ports: Optional[list[ContainerPort]] = Field(None, max_length=8)
    readiness_probe: Optional[Probe] = Field(None, alias="readinessProbe")
    resources: Optional[Resources] = None


class LocalObjectReference(_Strict):
    name: str = Field(min_length=1)


class PodMetadata(_Strict):
    labels: Optional[dict[str, str]] = Field(None, max_length=32)
    annotations: Optional[dict[str, str]] = Field(None, max_length=32)


class PodSpec(_Strict):
    containers: list[Container] = Field(min_length=1, max_length=8)
    image_pull_secrets: Optional[list[LocalObjectReference]] = Field(None, alias="imagePullSecrets")


class PodTemplate(_Strict):
    metadata: Optional[PodMetadata] = None
    spec: PodSpec


class DeviceSelector(_Strict):
    cel: Optional[str] = Field(None, min_length=1, max_length=10240)


class DeviceRequest(_Strict):
    name: str = Field(min_length=1, max_length=63)
    device_class_name: str = Field(alias="deviceClassName", min_length=1, max_length=253)
    count: int = Field(1, ge=1, le=64)
    selectors: Optional[list[DeviceSelector]] = Field(None, max_length=8)


class Worker(_Strict):
    nodes: int = Field(ge=1, le=63)


Role = Literal["Standalone", "Leader", "Worker"]


class EngineMember(_Strict):
    role: Role = "Standalone"
    node_pool_name: str = Field(alias="nodePoolName", min_length=1)
    device_requests: Optional[list[DeviceRequest]] = Field(None, alias="deviceRequests", min_length=1, max_length=16)
    worker: Optional[Worker] = None
    template: PodTemplate


class Engine(_Strict):
    name: str = Field(min_length=1, max_length=63)
    copies: int = Field(1, ge=1, le=64)
    phase: Optional[Literal["Prefill", "Decode"]] = None
    members: list[EngineMember] = Field(min_length=1, max_length=2)

    def member(self, role: Role) -> Optional[EngineMember]:
        return next((m for m in self.members if m.role == role), None)


class PickerContainer(_Strict):
    name: str = Field(min_length=1, max_length=63, pattern=DNS_LABEL)
    image: str = Field(min_length=1)
    command: Optional[list[str]] = None
    args: Optional[list[str]] = None
    env: Optional[list[EnvVar]] = None
    resources: Optional[Resources] = None


class PickerPodSpec(_Strict):
    containers: list[PickerContainer] = Field(min_length=1, max_length=1)
    image_pull_secrets: Optional[list[LocalObjectReference]] = Field(None, alias="imagePullSecrets")


class PickerTemplate(_Strict):
    spec: PickerPodSpec


class EndpointPicker(_Strict):
    config: Optional[dict[str, Any]] = None
    template: PickerTemplate


class Serving(_Strict):
    mode: Literal["Unified", "PrefillDecode"] = "Unified"
    router: Optional[Literal["EndpointPicker"]] = None
    endpoint_picker: Optional[EndpointPicker] = Field(None, alias="endpointPicker")


class ModelCacheRef(_Strict):
    name: str = Field(min_length=1)


class ModelReplicaSpec(_Strict):
    cluster_name: str = Field(alias="clusterName", min_length=1)
    model_cache_ref: Optional[ModelCacheRef] = Field(None, alias="modelCacheRef")
    serving: Optional[Serving] = None
    engines: list[Engine] = Field(min_length=1, max_length=8)


class ObjectMeta(Record):
    """The part of a replica's metadata the renderer reads (the API server judges the rest)."""

    model_config = ConfigDict(frozen=True)
    name: str
    namespace: Optional[str] = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


class ModelReplica(Record):
    model_config = ConfigDict(frozen=True)
    metadata: ObjectMeta
    spec: ModelReplicaSpec


def check_annotations() -> None:
    """Raise TypeError for any field of any record here whose annotation from_validated can't build (tests call it)."""
    for record in _records():
        _fields(record)


def _records() -> list[type[Record]]:
    return [v for v in globals().values() if isinstance(v, type) and issubclass(v, Record) and v.__module__ == __name__]


def from_validated(model: type[_M], data: dict[str, Any]) -> _M:
    """The typed view of data the CRD has already judged, built without validators.

    Validating it again would only repeat the CRD's verdict; tests/test_model.py runs pydantic's
    `model_validate` (tests/pydantic_view.py) on every valid fixture to prove both build the same.
    """
    values: dict[str, Any] = {}
    for name, key, convert in _fields(model):
        if key in data:
            value = data[key]
            values[name] = None if value is None else convert(value)
    return model.model_construct(**values)


@functools.cache
def _fields(model: type[Record]) -> tuple[tuple[str, str, Callable[[Any], Any]], ...]:
    """Each field's name, its key in the API, and how its value is built: read from the annotations once per class."""
    return tuple((name, field.alias or name, _converter(field.annotation)) for name, field in model.model_fields.items())


def _same(value: Any) -> Any:
    return value


@functools.cache
def _converter(annotation: Any) -> Callable[[Any], Any]:
    """How a (non-null) value of this annotation is built: a record, a list of them, or the value as it is."""
    origin = get_origin(annotation)
    if origin is Union:
        for member in get_args(annotation):
            _converter(member)  # each member is a kind this knows, or TypeError
        models = [a for a in get_args(annotation) if isinstance(a, type) and issubclass(a, Record)]
        lists = [a for a in get_args(annotation) if get_origin(a) is list]
        if not models and not lists:
            return _same
        as_model = _converter(models[0]) if models else None
        as_list = _converter(lists[0]) if lists else None

        def either(value: Any) -> Any:
            if as_model is not None and isinstance(value, dict):
                return as_model(value)
            if as_list is not None and isinstance(value, list):
                return as_list(value)
            return value

        return either
    if origin is list:
        (item,) = get_args(annotation)
        convert = _converter(item)
        return lambda value: [None if v is None else convert(v) for v in value]
    if isinstance(annotation, type) and issubclass(annotation, Record):
        return lambda value: from_validated(annotation, value)
    if origin is dict:
        _, item = get_args(annotation)
        if _converter(item) is not _same:
            raise TypeError(f"{annotation}: a map of records is not built by from_validated; add it to model._converter")
        return _same
    if origin is Literal or annotation is Any or annotation in _LEAVES:
        return _same
    raise TypeError(f"{annotation!r} is not an annotation from_validated knows how to build; add it to model._converter")


# Values the CRD has judged that are kept as they are.
_LEAVES = (str, int, bool, type(None))


def to_plain(model: Record) -> dict[str, Any]:
    """A model back to the API's own field names, leaving out what was not set (as model_dump would)."""
    out: dict[str, Any] = {}
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        if value is not None:
            out[field.alias or name] = _plain(value)
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, Record):
        return to_plain(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
