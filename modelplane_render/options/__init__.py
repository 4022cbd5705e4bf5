"""Every setting a front end takes, declared once (SETTINGS); the Options a render runs with; how each is read from text.

A setting reaches us through a command-line flag, an Argo CD plugin parameter (or the
Application's env `MODELPLANE_<NAME>`), or a field of the KRM function's RenderConfig spec. Its
row in SETTINGS says under which name each front end takes it, its kind, its parser, its
default and its help. argparse (commands.arguments), the command line read without argparse
(main), diff's options after a revision, Argo CD's parameters (and argocd/plugin.yaml, which a
test holds equal), the RenderConfig reader and its JSON Schema (`schema --render-config`), and
the render cache's key are all built from it: adding a setting is a row here, the code that
uses it, and the docs.

How a value travels, by kind:
- TEXT: a flag's argument; a parameter's `string`; a RenderConfig string. Empty text: the default.
- SWITCH: a flag without argument; a parameter's `string`, "true" or "false"; a RenderConfig boolean.
- LIST: a flag given once per entry; a parameter's `array`, or its `string` with the entries
  comma-separated (an Argo CD parameter is a string, an array or a map, and Application env is
  a string); a RenderConfig list of strings, in which an empty list means no entry at all.
- OBJECT: a Kubernetes object's field (a pod's affinity): a flag's argument and a parameter's `string`
  hold it as JSON (an Argo CD `map` holds strings only, not the lists and mappings inside it); a
  RenderConfig holds it as YAML, in place. Options keep it as canonical JSON text (sorted keys), so
  the three forms of one value render, and key the render cache, alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

from .. import constants as c
from .kustomize_build import parse_kustomize_build_options
from .parsers import (
    DEFAULT_HUB_CACHE_SIZE,
    DEFAULT_PICKER_REQUESTS,
    DEFAULT_TOLERATIONS,
    Request,
    Toleration,
    parse_cluster,
    parse_gateway,
    parse_namespace,
    parse_node_pool_label,
    parse_object_name,
    parse_requests,
    parse_size,
    parse_switch,
    parse_tolerations,
    request_text,
    toleration_text,
)
from .pod_fields import parse_affinity, parse_capabilities


@dataclass(frozen=True)
class Options:
    """What a render runs with besides its sources: one field per render setting of SETTINGS (a test holds them equal)."""

    namespace: Optional[str] = None
    gateway: Optional[tuple[str, str]] = None  # (namespace, name) of a Gateway for an HTTPRoute
    # Render only the replicas pinned to this InferenceCluster (spec.clusterName); the others are
    # still validated. None: every replica.
    cluster: Optional[str] = None
    # A render that yields no object from a replica is an error unless allowed: Argo CD prunes
    # every live object an app no longer renders.
    allow_empty: bool = False
    # The picker's ext-proc port serves TLS (a self-signed certificate) unless this says plaintext:
    # every common gateway speaks TLS to it; a few setups need plaintext (README: Gateways).
    picker_plaintext: bool = False
    # The node label whose value is a member's nodePoolName: the cluster's own node-pool label
    # (GKE: cloud.google.com/gke-nodepool, EKS: eks.amazonaws.com/nodegroup, AKS: kubernetes.azure.com/agentpool).
    node_pool_label: str = c.LABEL_POOL
    tolerations: tuple[Toleration, ...] = DEFAULT_TOLERATIONS
    # Every LeaderWorkerSet is rendered without spec.replicas: an autoscaler owns the group count
    # (docs/autoscaling.md says how to turn it on for a live one without a scale-down).
    autoscaled: bool = False
    # What a platform gives every engine pod besides what the replica says (docs/platform-settings.md).
    service_account: Optional[str] = None
    priority_class: Optional[str] = None
    affinity: Optional[str] = None  # an Affinity (core/v1) as canonical JSON text: OBJECT's form in Options
    capabilities: tuple[str, ...] = ()  # added to the engine container's securityContext
    picker_requests: tuple[Request, ...] = DEFAULT_PICKER_REQUESTS
    hub_cache_size: str = DEFAULT_HUB_CACHE_SIZE  # the emptyDir engines download into without a model cache

    def renders(self, cluster_name: object) -> bool:
        """Whether a replica pinned to this cluster (its spec.clusterName) renders in this run."""
        return self.cluster is None or cluster_name == self.cluster


# --- the table ---------------------------------------------------------------------------------

TEXT, SWITCH, LIST, OBJECT = "text", "switch", "list", "object"
RENDERING = ("render", "validate", "diff")  # the commands that render, and so take the render settings' flags


@dataclass(frozen=True)
class Setting:
    """One setting, under the name each front end gives it."""

    name: str  # its Argo CD parameter's name (and `--NAME`, the flag, unless `flag` says otherwise)
    kind: str  # TEXT, SWITCH, LIST or OBJECT: how its value travels (the module's docstring)
    help: str  # the command line's help; the RenderConfig schema's description
    default: Any  # the value when it is not given
    # (value in its kind's form, where it came from) -> value, or None for the default. None: the front
    # end that reads this setting checks it itself (a RenderConfig's sources, each at its own place).
    parse: Optional[Callable[[Any, str], Any]]
    field: Optional[str] = None  # its Options field: a render setting, in the render cache's key; None: read by a front end itself
    flag: Optional[str] = ""  # "": --NAME; None: not on the command line
    short: Optional[str] = None
    metavar: Optional[str] = None
    commands: tuple[str, ...] = RENDERING  # the commands whose command line takes the flag
    diff_help: Optional[str] = None  # diff takes it once per report: repeatable, with this help
    config_key: Optional[str] = None  # its field in a RenderConfig's spec; None: not there
    title: Optional[str] = None  # its Argo CD parameter's title; None: not a parameter
    tooltip: str = ""  # its Argo CD parameter's tooltip
    entry_text: Callable[[Any], str] = str  # a LIST's default entry as text, for plugin.yaml

    @property
    def option(self) -> Optional[str]:
        """The command-line flag, e.g. --node-pool-label (None: not on the command line)."""
        return None if self.flag is None else (self.flag or f"--{self.name}")

    @property
    def dest(self) -> str:
        """Where argparse keeps the flag's value (and the command line read without argparse too)."""
        return (self.option or self.name).lstrip("-").replace("-", "_")

    @property
    def app_env(self) -> str:
        """Its Application env name (`spec.source.plugin.env[].name`), e.g. MODELPLANE_GATEWAY."""
        return "MODELPLANE_" + self.name.upper().replace("-", "_")

    @property
    def announced(self) -> str:
        """The default as argocd/plugin.yaml announces it (Argo CD sends only what an Application sets)."""
        if self.kind == SWITCH:
            return "true" if self.default else "false"
        if self.kind == LIST:
            return ",".join(self.entry_text(entry) for entry in self.default)
        return "" if self.default is None else str(self.default)

    @property
    def in_render_key(self) -> bool:
        """Whether the render cache keys a `render` by it: every Options field is (cache.render.render_key)."""
        return self.field is not None


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "namespace",
        TEXT,
        "namespace of replicas that set none",
        None,
        parse_namespace,
        field="namespace",
        short="-n",
        metavar="NS",
        config_key="namespace",
        title="Default namespace",
        tooltip="Namespace of the replicas that set none. Empty: the Application's destination namespace.",
    ),
    Setting(
        "gateway",
        TEXT,
        "render an HTTPRoute per replica, attached to this Gateway",
        None,
        parse_gateway,
        field="gateway",
        metavar="NAMESPACE/NAME",
        config_key="gateway",
        title="Gateway (NAMESPACE/NAME)",
        tooltip="Also render an HTTPRoute per replica, attached to this Gateway. Empty: no HTTPRoute.",
    ),
    Setting(
        "cluster",
        TEXT,
        "render only the replicas whose spec.clusterName is NAME (the others are still validated)",
        None,
        parse_cluster,
        field="cluster",
        metavar="NAME",
        diff_help="compare only the replicas pinned to cluster NAME; repeat it for a report per cluster",
        config_key="cluster",
        title="InferenceCluster",
        tooltip="Render only the replicas whose spec.clusterName is this (the others are still validated). Empty: every replica.",
    ),
    Setting(
        "check-cluster-apis",
        SWITCH,
        "fail when the destination cluster does not serve an API the rendered objects need",
        True,
        parse_switch,
        flag=None,
        title="Check the cluster's APIs",
        tooltip="Fail when the destination cluster does not serve an API the rendered objects need (LeaderWorkerSet, DRA v1, "
        'InferencePool). Set "false" when this Application\'s sync installs those CRDs itself.',
    ),
    Setting(
        "allow-empty",
        SWITCH,
        "succeed with no object rendered from a replica (by default an error: Argo CD prunes whatever an app no longer renders)",
        False,
        parse_switch,
        field="allow_empty",
        # validate renders nothing to apply, and diff shows an empty side: both allow it always.
        commands=("render",),
        config_key="allowEmpty",
        title="Allow an empty render",
        tooltip="Succeed when no object is rendered from a replica. By default that is an error, because Argo CD prunes every "
        'live object an app no longer renders. Set "true" only to empty the app on purpose.',
    ),
    Setting(
        "picker-plaintext",
        SWITCH,
        "the endpoint picker serves plaintext gRPC (--secure-serving=false), for a gateway that can't speak TLS to it",
        False,
        parse_switch,
        field="picker_plaintext",
        config_key="pickerPlaintext",
        title="Picker without TLS",
        tooltip='Set "true" when the Gateway connects to the endpoint picker in plaintext gRPC. By default the picker serves '
        "TLS with a self-signed certificate, which Istio (with a DestinationRule), GKE, kgateway and Envoy Gateway expect.",
    ),
    Setting(
        "node-pool-label",
        TEXT,
        f"the node label a member's nodePoolName selects (default: {c.LABEL_POOL}; GKE: cloud.google.com/gke-nodepool)",
        c.LABEL_POOL,
        parse_node_pool_label,
        field="node_pool_label",
        metavar="KEY",
        config_key="nodePoolLabel",
        title="Node-pool label",
        tooltip="The node label whose value a member's nodePoolName is: the cluster's own (GKE: cloud.google.com/gke-nodepool, "
        "EKS: eks.amazonaws.com/nodegroup, AKS: kubernetes.azure.com/agentpool).",
    ),
    Setting(
        "tolerations",
        LIST,
        "a taint every engine pod tolerates, repeatable, replacing the default "
        f"({', '.join(toleration_text(t) for t in DEFAULT_TOLERATIONS)}); `none` for no toleration",
        DEFAULT_TOLERATIONS,
        parse_tolerations,
        field="tolerations",
        flag="--toleration",
        metavar="KEY[=VALUE][:EFFECT]",
        config_key="tolerations",
        title="Engine tolerations",
        entry_text=toleration_text,
        tooltip='The taints every engine pod tolerates, comma-separated KEY[=VALUE][:EFFECT] (e.g. amd.com/gpu:NoSchedule), or "none".',
    ),
    Setting(
        "picker-requests",
        LIST,
        "what each endpoint picker pod requests, NAME=QUANTITY, repeatable, replacing the default "
        f"({', '.join(request_text(r) for r in DEFAULT_PICKER_REQUESTS)}); `none` for none; a replica's own picker resources win",
        DEFAULT_PICKER_REQUESTS,
        parse_requests,
        field="picker_requests",
        flag="--picker-request",
        metavar="NAME=QUANTITY",
        config_key="pickerRequests",
        title="Picker resource requests",
        entry_text=request_text,
        tooltip='What each endpoint picker pod requests, comma-separated NAME=QUANTITY (cpu, memory, ephemeral-storage), or "none". '
        "A replica's own spec.serving.endpointPicker resources win.",
    ),
    Setting(
        "hub-cache-size",
        TEXT,
        f"the size limit of the emptyDir a replica without a modelCacheRef downloads its model into (default {DEFAULT_HUB_CACHE_SIZE})",
        DEFAULT_HUB_CACHE_SIZE,
        parse_size,
        field="hub_cache_size",
        metavar="SIZE",
        config_key="hubCacheSize",
        title="Hub cache size",
        tooltip="The size limit of the emptyDir (HF_HOME) an engine without a modelCacheRef downloads its model into. "
        "Past it the kubelet evicts the pod.",
    ),
    Setting(
        "autoscaled",
        SWITCH,
        "render no spec.replicas: an autoscaler (HPA, KEDA) owns each LeaderWorkerSet's group count "
        "(docs/autoscaling.md: turning it on for a live one)",
        False,
        parse_switch,
        field="autoscaled",
        config_key="autoscaled",
        title="Autoscaled",
        tooltip='Set "true" when an autoscaler scales the LeaderWorkerSets: spec.replicas is not rendered, and copies is '
        "not applied. The Application must ignore /spec/replicas with RespectIgnoreDifferences=true (docs/autoscaling.md).",
    ),
    Setting(
        "service-account",
        TEXT,
        "the ServiceAccount every engine pod runs as (workload identity to read weights); default: the namespace's default",
        None,
        parse_object_name("ServiceAccount"),
        field="service_account",
        metavar="NAME",
        config_key="serviceAccount",
        title="Engine ServiceAccount",
        tooltip="The ServiceAccount every engine pod runs as, in the replica's namespace (e.g. one bound to a cloud identity "
        "that reads the weights). Empty: the namespace's default.",
    ),
    Setting(
        "priority-class",
        TEXT,
        "the PriorityClass of every engine pod",
        None,
        parse_object_name("PriorityClass"),
        field="priority_class",
        metavar="NAME",
        config_key="priorityClass",
        title="Engine PriorityClass",
        tooltip="The PriorityClass of every engine pod. Empty: the cluster's global default.",
    ),
    Setting(
        "affinity",
        OBJECT,
        "a pod affinity (JSON) every engine pod gets besides its node pool's nodeSelector (both must hold)",
        None,
        parse_affinity,
        field="affinity",
        metavar="JSON",
        config_key="affinity",
        title="Engine affinity (JSON)",
        tooltip='The affinity of every engine pod, as JSON, e.g. {"nodeAffinity": {...}}. It adds to the node pool\'s '
        "nodeSelector: a node must satisfy both.",
    ),
    Setting(
        "capabilities",
        LIST,
        "a Linux capability the engine container adds (e.g. IPC_LOCK for RDMA), repeatable",
        (),
        parse_capabilities,
        field="capabilities",
        flag="--capability",
        metavar="NAME",
        config_key="capabilities",
        title="Engine capabilities",
        tooltip="Linux capabilities the engine container adds, comma-separated (e.g. IPC_LOCK for RDMA). Empty: none.",
    ),
    Setting(
        "kustomize-build-options",
        TEXT,
        "flags for `kustomize build` of an app that is a kustomization (Argo CD's kustomize.buildOptions)",
        None,
        parse_kustomize_build_options,
        flag=None,  # on a laptop, kustomize is run by hand, with its own flags
        title="kustomize build options",
        tooltip="For an app that is a kustomization: flags for its kustomize build, as Argo CD's kustomize.buildOptions "
        "(which Argo CD does not give a plugin), e.g. --load-restrictor LoadRestrictionsNone. --enable-helm is not taken: the "
        "sidecar has no helm.",
    ),
    Setting(
        "sources",
        LIST,
        "files or directories of replicas to render and add (a generator), relative to the kustomization's directory",
        (),
        None,
        flag=None,
        config_key="sources",
    ),
)
RENDER_SETTINGS = tuple(s for s in SETTINGS if s.field is not None)
PARAMETERS = tuple(s for s in SETTINGS if s.title is not None)
CONFIG_SETTINGS = tuple(s for s in SETTINGS if s.config_key is not None)
BY_NAME = {s.name: s for s in SETTINGS}


def command_settings(command: str) -> tuple[Setting, ...]:
    """The settings whose flags `command` takes, in the table's order."""
    return tuple(s for s in SETTINGS if s.option is not None and command in s.commands)


def read(setting: Setting, value: Any, source: str) -> Any:
    """The setting's value from its kind's form (None: not given, so the default)."""
    if value is None or setting.parse is None:
        return None
    return setting.parse(value, source)


def options_with(values: dict[str, Any]) -> Options:
    """Options from render settings' values by setting name; None: not given, so the field's default stays."""
    given: dict[str, Any] = {}
    for name, value in values.items():
        field = BY_NAME[name].field
        if value is not None and field is not None:
            given[field] = value
    return Options(**given)
