"""kmodel: a deterministic, in-process model of the Kubernetes control plane, explored by Hypothesis."""

__version__ = "0.1.0"
