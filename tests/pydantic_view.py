"""The records of modelplane_render.model as real pydantic models, for the tests that compare them with the CRD.

The runtime never imports pydantic (modelplane_render/records.py says why); this is the one place
that turns the same declarations into pydantic models.
"""

from __future__ import annotations

from typing import Any, ClassVar, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic import ConfigDict as PydanticConfig
from pydantic import Field as PydanticField

from modelplane_render.records import _MISSING, Record

_PYDANTIC: dict[type, Any] = {}


def pydantic_model(cls: type[Record]) -> Any:
    """The pydantic model of a record class (and, inside it, of every record class it refers to)."""
    if cls in _PYDANTIC:
        return _PYDANTIC[cls]
    annotations: dict[str, Any] = {}
    namespace: dict[str, Any] = {"__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__}
    for klass in reversed(cls.__mro__):  # methods and class variables (Engine.member, properties_bounds)
        for name, value in klass.__dict__.items():
            if (
                klass is not object
                and not name.startswith("__")
                and name not in ("_declared", "_fields", "model_config", "model_construct")
            ):
                namespace[name] = value
                if name in klass.__dict__.get("__annotations__", {}):
                    annotations[name] = ClassVar[Any]
    for name, field in cls.model_fields.items():
        annotations[name] = _pydantic_annotation(field.annotation)
        if field.default_factory is not None:
            namespace[name] = PydanticField(alias=field.alias, default_factory=field.default_factory, **field.constraints)
        else:
            namespace[name] = PydanticField(... if field.default is _MISSING else field.default, alias=field.alias, **field.constraints)
    namespace["__annotations__"] = annotations
    namespace["model_config"] = PydanticConfig(**cls.model_config)  # type: ignore[typeddict-item]
    model = _PYDANTIC[cls] = type(cls.__name__, (BaseModel,), namespace)
    return model


def _pydantic_annotation(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, Record):
        return pydantic_model(annotation)
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Union:
        return Union[tuple(_pydantic_annotation(a) for a in args)]
    if origin in (list, dict):
        return origin[tuple(_pydantic_annotation(a) for a in args)]
    return annotation
