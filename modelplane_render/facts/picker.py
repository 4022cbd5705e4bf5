"""What the endpoint picker (llm-d-router v0.9.0) is given by us, what it watches, and what its health server answers.

A user's own args and env must not repeat what we give it.
"""

from __future__ import annotations

# Flags of the picker that we set, each with what it follows: a user repeating one is an error.
_FOLLOWS_POOL = "it follows the pool and the config"
PICKER_FLAGS = {
    "--pool-name": _FOLLOWS_POOL,
    "--pool-namespace": _FOLLOWS_POOL,
    "--pool-group": _FOLLOWS_POOL,
    "--config-file": _FOLLOWS_POOL,
    "--grpc-port": _FOLLOWS_POOL,
    "--grpc-health-port": _FOLLOWS_POOL,
    "--metrics-port": _FOLLOWS_POOL,
    "--metrics-endpoint-auth": _FOLLOWS_POOL,
    "--ha-enable-leader-election": "one picker serves the pool: a standby is never Ready, so its Deployment never reads available",
    # pkg/epp/server/options.go: TLS on by default, with a self-signed certificate unless --cert-path.
    "--secure-serving": "it follows --picker-plaintext (Argo CD: picker-plaintext; a RenderConfig: spec.pickerPlaintext)",
}
PICKER_ENV = ("NAMESPACE", "POD_NAME")

# pkg/epp/server/options.go: --tracing is on by default, and with no OTEL_* env its exporter is the
# console (telemetry.go: stdouttrace, pretty-printed): every sampled request's spans in the picker's log.
# llm-d's chart writes --tracing=false unless tracing is configured; so do we, unless the replica's
# picker args say --tracing themselves (with the OTEL_* env they give it).
TRACING_FLAG = "--tracing"

# One picker, no leader election, rolled with a surge. With --ha-enable-leader-election (llm-d's chart
# with replicas > 1, and ours before) only the leader is Ready (cmd/epp/runner/health.go): a standby
# keeps the Deployment's available replicas below its updated ones for ever, which Argo CD's health
# (gitops-engine health_deployment.go) and `kubectl rollout status` read as Progressing, then Degraded
# at the progress deadline. Nor did the standby buy much: a draining leader keeps the lease until its
# open streams end (controller-runtime releases it after the runnables stop, up to 30 s), and the
# pool's failureMode FailOpen routes without picking meanwhile. Without leader election two pickers
# write nothing to the API server and both serve (run by hand: docs/design.md), so a rolling update
# that starts the new pod before stopping the old one leaves no gap.
PICKER_MAX_SURGE = 1
PICKER_MAX_UNAVAILABLE = 0
# The health server can answer SERVING up to 2.3 s before the ext-proc port listens (measured: the
# gRPC server makes its self-signed RSA-4096 certificate first, internal/tls/tls.go): the old picker
# must not be stopped the moment the new one reads Ready.
PICKER_MIN_READY_SECONDS = 5

# cmd/epp/runner/health.go: without leader election every service name answers alike (SERVING once the
# InferencePool is in the datastore); with it, "liveness" while the process runs and "readiness" on
# the leader only, and the single-replica chart's "inference-extension" gets SERVICE_UNKNOWN. These two
# mean the same now and stay right if leader election is ever turned on: "inference-extension" would
# then have liveness kill every picker.
LIVENESS_SERVICE = "liveness"
READINESS_SERVICE = "readiness"

# What the picker reads from the API server, as a Role's rules. pkg/epp/server/controller_manager.go
# caches pods, its InferencePool, and InferenceObjective and InferenceModelRewrite in whichever group
# discovery finds (controller_config.go: llm-d.ai first, then the legacy inference.networking.x-k8s.io).
# One forbidden watch stops every controller: the pool never syncs, readiness never passes, and
# the picker exits after the 2-minute cache-sync timeout. Without leader election it writes nothing
# (no Lease, no Event). The rules match the chart's for one replica
# (config/charts/llm-d-router-gateway/templates/rbac.yaml, routerlib/templates/_rbac.yaml).
READ = ["get", "list", "watch"]
ROLE_RULES = (
    {"apiGroups": [""], "resources": ["pods"], "verbs": READ},
    {"apiGroups": ["inference.networking.k8s.io"], "resources": ["inferencepools"], "verbs": READ},
    {
        "apiGroups": ["llm-d.ai", "inference.networking.x-k8s.io"],
        "resources": ["inferenceobjectives", "inferencemodelrewrites"],
        "verbs": READ,
    },
)

# config/charts/routerlib/templates/_deployment.yaml: "this timeout should mirror the longest grace
# period of the pods within the pool": the picker outlives the engines' drain.
TERMINATION_GRACE_SECONDS = 130

# approximateprefix/plugin.go GetBlockSize: the prefix index counts blocks of at least 64 tokens
# (minBlockSizeTokens, llm-d-router issue 1158), whatever the engine's KV block size; a smaller
# blockSizeTokens only logs a warning. With autoTune (its default) each engine's reported block
# size (vllm:cache_config_info) wins; the configured value is for engines that report none, as
# SGLang 0.5 does not. maxPrefixBlocksToMatch is not written: maxPrefixTokensToMatch (131072)
# overrides it.
MIN_PREFIX_BLOCK_TOKENS = 64


def prefix_block_tokens(engine_block_size: int) -> int:
    """The blockSizeTokens that means what it says: the engine's block size, raised to the picker's floor."""
    return max(engine_block_size, MIN_PREFIX_BLOCK_TOKENS)


# The scorers' weights. A config file replaces the loader's defaults (pkg/epp/config/loader/defaults.go:
# queue 2, KV-cache utilization 2, prefix cache 3, what llm-d's chart writes in its default-plugins.yaml
# and its inference-scheduling guide runs), so the file repeats them: the prefill profile of a
# prefill/decode pair too. A decode engine gets requests whose prompt is already computed: its profile
# scores the requests in flight and the prefix (llm-d's pd-disaggregation guide: active-request 2,
# prefix cache 2). docs/design.md says where we depart from llm-d and why.
QUEUE_WEIGHT = 2
KV_CACHE_WEIGHT = 2
PREFIX_WEIGHT = 3
DECODE_ACTIVE_WEIGHT = 2
DECODE_PREFIX_WEIGHT = 2

# pkg/epp/config/loader/defaults.go names openai, anthropic and vllmhttp when a config names no
# parser; a request body on a path none claims (/tokenize, /v1/score, /pooling) is then refused with
# HTTP 400 at the gateway (handlers/parsers.go). passthrough-parser claims no path, so last in the
# list it is the fallback: those requests reach an engine, routed without prefix scoring.
PARSERS = ("openai-parser", "anthropic-parser", "vllmhttp-parser", "passthrough-parser")
