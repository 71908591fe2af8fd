"""An operator written with the official `kubernetes` client's watch and its leader election (shard_runtime.py):
a Shard (client.yaml) of spec.replicas N gets the ConfigMaps <shard>-0 … <shard>-(N-1), labelled with its name.

It is level-triggered: after every list and every event it compares all the ConfigMaps it made with all the
Shards it knows, creating the missing and deleting the ones no Shard wants, so a DELETED event it never saw (it
was down, or its watch ended and it listed again) is made good by the next list.

    kmodel check --operator "python examples/operators/client_correct.py" \\
        --operator-manifests examples/operators/client.yaml
"""

from kubernetes import client

import shard_runtime as rt

shards: dict[str, int] = {}


def reconcile() -> None:
    core = client.CoreV1Api()
    wanted = {f"{name}-{i}": name for name, replicas in shards.items() for i in range(replicas)}
    made = rt.children(core)
    for name in sorted(set(made) - set(wanted)):
        rt.delete_child(core, name)
    for name in sorted(set(wanted) - set(made)):
        rt.make_child(core, wanted[name], int(name.rsplit("-", 1)[1]))


def on_list(items: list) -> None:
    shards.clear()
    shards.update({s["metadata"]["name"]: s["spec"]["replicas"] for s in items})
    reconcile()


def on_event(kind: str, shard: dict) -> None:
    if kind == "DELETED":
        shards.pop(shard["metadata"]["name"], None)
    elif kind in ("ADDED", "MODIFIED"):
        shards[shard["metadata"]["name"]] = shard["spec"]["replicas"]
    reconcile()


if __name__ == "__main__":
    rt.run(on_list, on_event)
