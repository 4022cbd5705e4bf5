"""What the endpoint picker is given by us, so a user's own args and env must not repeat it."""

from __future__ import annotations

# Flags of the picker that follow the pool and the config: a user repeating one is an error.
PICKER_FLAGS = (
    "--pool-name",
    "--pool-namespace",
    "--pool-group",
    "--config-file",
    "--grpc-port",
    "--grpc-health-port",
    "--metrics-port",
    "--metrics-endpoint-auth",
    "--ha-enable-leader-election",
)
PICKER_ENV = ("NAMESPACE", "POD_NAME")
