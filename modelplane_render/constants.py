"""Every label key, port, path, image and API version the output uses, in one place."""

from __future__ import annotations

# Label keys.
LABEL_ENGINE = "modelplane.ai/engine"
LABEL_ROLE = "modelplane.ai/role"
LABEL_SERVING = "modelplane.ai/serving"
LABEL_REPLICA = "modelplane.ai/replica"
LABEL_POOL = "modelplane.ai/pool"
LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_BY = "modelplane-render"
LABEL_LLMD_ROLE = "llm-d.ai/role"
LABEL_LLMD_SERVING = "llm-d.ai/inference-serving"
LABEL_ENGINE_TYPE = "llm-d.ai/engine-type"
LABEL_PICKER_APP = "app"
RESERVED_LABEL_PREFIX = "modelplane.ai/"
ANNOTATION_PICKER_CHECKSUM = "modelplane.ai/epp-config-checksum"
ANNOTATION_ARGOCD_SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
ARGOCD_PRUNE_LAST = "PruneLast=true"

# Engine serving.
ENGINE_CONTAINER = "engine"
SERVING_PORT = 8000
DECODE_PORT = 8001
SERVING_PORT_NAME = "http"
HEALTH_PATH = "/health"
PROBE_PERIOD_SECONDS = 10
# vLLM and SGLang start their HTTP server only once the weights are loaded: the startup probe's
# budget is the load, 360 x 10 s = 60 min, what llm-d's prefill/decode guides allow a large model
# (a 70B loads in 3 to 40 min from a PVC, storage deciding; a 405B can take longer: docs/design.md).
STARTUP_FAILURE_THRESHOLD = 360
# After startup: 3 failures 10 s apart restart a wedged engine or take it out of the pool (llm-d's numbers).
LIVENESS_FAILURE_THRESHOLD = 3
READINESS_FAILURE_THRESHOLD = 3
# llm-d-router's config/manifests/vllm/gpu-deployment.yaml: vLLM stops accepting connections on
# SIGTERM, so a 30 s preStop sleep lets the picker and the gateway take the pod out of rotation
# first; 130 s of grace then covers the slowest request at full batch (about 55 s) plus the
# sleep, with half again for safety.
ENGINE_PRESTOP_SLEEP_SECONDS = 30
ENGINE_TERMINATION_GRACE_SECONDS = 130

# Gang wiring (LWS injects LWS_*; we give engines stable names for them).
ENV_LEADER_ADDRESS = "MODELPLANE_LEADER_ADDRESS"
ENV_RANK = "MODELPLANE_RANK"
LWS_LEADER_ADDRESS = "$(LWS_LEADER_ADDRESS)"
LWS_WORKER_INDEX = "$(LWS_WORKER_INDEX)"

# Prefill/decode.
NIXL_HOST_ENV = "VLLM_NIXL_SIDE_CHANNEL_HOST"
NIXL_PORT_ENV = "VLLM_NIXL_SIDE_CHANNEL_PORT"
NIXL_PORT = "5557"
PD_SIDECAR_CONTAINER = "pd-sidecar"
PD_SIDECAR_IMAGE = "ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.9.0"
PD_SIDECAR_PORT = 8000
PD_SIDECAR_PORT_NAME = "proxy"
PD_SIDECAR_PROBE_TIMEOUT_SECONDS = 1

# Volumes.
SHM_VOLUME = "dshm"
SHM_PATH = "/dev/shm"
MODEL_CACHE_VOLUME = "model-cache"
MODEL_CACHE_PATH = "/mnt/models"
# Without a model cache the engines download from the hub into HF_HOME: an emptyDir with a size limit
# (the hub-cache-size setting), not the container's writable layer, which no limit guards and which is
# lost with the container (llm-d-modelservice and KServe give the hub cache an emptyDir too).
HUB_CACHE_VOLUME = "hub-cache"
HUB_CACHE_PATH = "/mnt/hub-cache"
HUB_HOME_ENV = "HF_HOME"
# Env a user may set to put the hub's cache elsewhere: then we add none.
HUB_CACHE_ENVS = ("HF_HOME", "HF_HUB_CACHE")

# Scheduling.
DEVICE_CLAIM = "devices"

# Endpoint picker.
PICKER_IMAGE = "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0"
PICKER_CONTAINER = "epp"
PICKER_GRPC_PORT = 9002
PICKER_HEALTH_PORT = 9003
PICKER_METRICS_PORT = 9090
PICKER_CONFIG_KEY = "epp-config.yaml"
PICKER_CONFIG_DIR = "/config"
# One picker a pool, without leader election (facts.picker: why not a standby).
PICKER_REPLICAS = 1
PICKER_GRPC_SERVICE_PORT_NAME = "grpc-ext-proc"

# API versions of what we emit.
LWS_API = "leaderworkerset.x-k8s.io/v1"
DRA_API = "resource.k8s.io/v1"
POOL_API = "inference.networking.k8s.io/v1"
ROUTE_API = "gateway.networking.k8s.io/v1"
PICKER_CONFIG_API = "llm-d.ai/v1alpha1"

# The KRM function's own config (a kustomize function config, never an object of a cluster).
RENDER_CONFIG_GROUP = "render.modelplane.ai"
RENDER_CONFIG_API = f"{RENDER_CONFIG_GROUP}/v1alpha1"
RENDER_CONFIG_KIND = "RenderConfig"

# resource.k8s.io/v1 defaults a device request with no allocationMode to this (plan.pods writes it out).
DEFAULT_ALLOCATION_MODE = "ExactCount"
