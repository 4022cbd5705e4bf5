"""Records declared with pydantic's spelling, without importing pydantic.

model.py declares a ModelReplica field by field (`name: str = Field(min_length=1)`, a
`model_config`), and that one declaration serves twice:

- at run time as `Record`s: frozen objects built from data the CRD has already judged
  (`model_construct`), with `model_fields` for the code that walks them. Importing pydantic and
  building its model classes took 40% of a cold render of one replica, for a view that
  never validates anything;
- in the tests as real pydantic models (`tests/pydantic_view.py`), built from the same annotations,
  defaults, aliases, bounds and config: they are compared with the CRD constraint by constraint,
  and pydantic's validation is checked to build the same values as `model_construct`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

_MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<required>"})()


class FieldInfo:
    """A field: its annotation (resolved on first use), default, alias and bounds (pydantic.Field's keywords)."""

    __slots__ = ("annotation", "default", "default_factory", "alias", "constraints")

    def __init__(
        self, default: Any = _MISSING, *, alias: str | None = None, default_factory: Callable[[], Any] | None = None, **constraints: Any
    ):
        self.annotation: Any = None
        self.default = default
        self.default_factory = default_factory
        self.alias = alias
        self.constraints = constraints

    def is_required(self) -> bool:
        return self.default is _MISSING and self.default_factory is None


def Field(
    default: Any = _MISSING, *, alias: str | None = None, default_factory: Callable[[], Any] | None = None, **constraints: Any
) -> Any:  # noqa: N802 - pydantic's name
    """A field's default, alias and bounds, as pydantic.Field takes them."""
    return FieldInfo(default, alias=alias, default_factory=default_factory, **constraints)


def ConfigDict(**settings: Any) -> dict[str, Any]:  # noqa: N802 - pydantic's name
    return settings


_R = TypeVar("_R", bound="Record")


class _RecordType(type):
    @property
    def model_fields(cls) -> dict[str, FieldInfo]:
        """Every field, in declaration order (bases first), with its annotation resolved."""
        fields: dict[str, FieldInfo] | None = cls.__dict__.get("_fields")
        if fields is None:
            fields = {}
            for klass in reversed(cls.__mro__):
                namespace = vars(sys.modules[klass.__module__])
                for name, field in klass.__dict__.get("_declared", {}).items():
                    field.annotation = eval(klass.__annotations__[name], namespace)  # noqa: S307 - our own annotations
                    fields[name] = field
            type.__setattr__(cls, "_fields", fields)
        return fields


class Record(metaclass=_RecordType):
    """A frozen record: pydantic's model_construct, ==, hash and repr, without its validators."""

    model_config: ClassVar[dict[str, Any]] = {}
    _declared: ClassVar[dict[str, FieldInfo]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared: dict[str, FieldInfo] = {}
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                continue
            default = cls.__dict__.get(name, _MISSING)
            declared[name] = default if isinstance(default, FieldInfo) else FieldInfo(default)
            if name in cls.__dict__:
                delattr(cls, name)  # an unset field is missing, as in pydantic, not its default
        cls._declared = declared

    @classmethod
    def model_construct(cls: type[_R], **values: Any) -> _R:
        """A record of values taken as they are (pydantic's model_construct): defaults fill what is not given."""
        record = object.__new__(cls)
        slots = record.__dict__
        for name, field in cls.model_fields.items():
            if name in values:
                slots[name] = values[name]
            elif field.default_factory is not None:
                slots[name] = field.default_factory()
            elif field.default is not _MISSING:
                slots[name] = field.default
        return record

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: {name} can't be set")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: {name} can't be deleted")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((type(self), *self.__dict__.values()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.__dict__.items())})"
