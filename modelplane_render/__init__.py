"""modelplane-render: ModelReplica sources in, the Kubernetes objects that serve them out."""

__version__ = "0.1.0"
