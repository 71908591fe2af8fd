"""A small kopf operator for tests/serve/test_kopf.py: it reconciles a Database (examples/crd.yaml) by setting its
status (phase Ready, replicas) and an annotation naming the replicas it reconciled."""

import kopf


@kopf.on.create("example.com", "v1", "databases")
@kopf.on.update("example.com", "v1", "databases")
def reconcile(spec, patch, **_):
    replicas = spec.get("replicas", 1)
    patch.status["phase"] = "Ready"
    patch.status["replicas"] = replicas
    patch.metadata.annotations["example.com/reconciled-replicas"] = str(replicas)
