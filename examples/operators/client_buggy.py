"""The Shard operator of client_correct.py with one planted mistake, of Sieve's third class (an unobserved state):
it is edge-triggered. Each event acts on its own Shard only, and a Shard's ConfigMaps are deleted only when its
DELETED event comes. A Shard deleted while the operator is down (or between a watch's end and the next list) is
simply absent from the next list: no event says it went, and its ConfigMaps stay for ever (the invariant
shard-configmaps, examples/operators/shards.py).

    kmodel check --operator "python examples/operators/client_buggy.py" \\
        --operator-manifests examples/operators/client.yaml
"""

from kubernetes import client

import shard_runtime as rt


def sync(name: str, replicas: int) -> None:
    core = client.CoreV1Api()
    made = {child for child, owner in rt.children(core).items() if owner == name}
    wanted = {f"{name}-{i}" for i in range(replicas)}
    for child in sorted(made - wanted):
        rt.delete_child(core, child)
    for child in sorted(wanted - made):
        rt.make_child(core, name, int(child.rsplit("-", 1)[1]))


def on_list(items: list) -> None:
    for shard in items:  # as an informer's ADDED events after a list: the Shards there are, nothing of the gone
        sync(shard["metadata"]["name"], shard["spec"]["replicas"])


def on_event(kind: str, shard: dict) -> None:
    name = shard["metadata"]["name"]
    sync(name, 0 if kind == "DELETED" else shard["spec"]["replicas"])


if __name__ == "__main__":
    rt.run(on_list, on_event)
