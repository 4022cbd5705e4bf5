"""Stage 3, plan: every decision about what a replica becomes, as pure functions of the model.

The plan says which objects exist, what each is named, which pods carry which labels, ports,
env, volumes and claims. Templates then only give these decisions their YAML shape.

- `replica`: the objects of a replica and their names;
- `pods`: each member's pod template and its containers (add a pod or container field here);
- `picker`: the endpoint picker's Deployment and its EndpointPickerConfig.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..kinds import OutputKind


@dataclass
class PlannedObject:
    """One object to render: the template that gives it shape and the values it needs."""

    api_version: str
    kind: str
    name: str
    namespace: str
    template: str
    values: dict[str, Any]
    source: str = ""


@dataclass
class ReplicaPlan:
    replica: str
    namespace: str
    objects: list[PlannedObject] = field(default_factory=list)

    def add(self, kind: OutputKind, name: str, values: dict[str, Any], source: str) -> None:
        self.objects.append(PlannedObject(kind.api_version, kind.kind, name, self.namespace, kind.template, values, source))
