"""What both Shard operators (client_correct.py, client_buggy.py) share, as an operator written with the official
`kubernetes` client has it: the kubeconfig, leader election with the client's own `kubernetes.leaderelection`
(a Lease, default/shard-operator), and a list-then-watch loop that lists again when the watch ends or is
answered 410 Expired. Each operator gives `run` what it does with a list and with each event."""

from __future__ import annotations

import logging
import os
import socket
import sys
from typing import Callable

from kubernetes import client, config, watch
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock

GROUP, VERSION, PLURAL, NAMESPACE = "batch.example.com", "v1", "shards", "default"
LABEL = "batch.example.com/shard"
#: the watch's timeoutSeconds: the server ends it after this long and the loop lists again
WATCH_TIMEOUT_S = 30


def children(core: client.CoreV1Api) -> dict[str, str]:
    """The ConfigMaps the operator made: name -> its Shard's name."""
    items = core.list_namespaced_config_map(NAMESPACE, label_selector=LABEL).items
    return {cm.metadata.name: cm.metadata.labels[LABEL] for cm in items}


def make_child(core: client.CoreV1Api, shard: str, index: int) -> None:
    body = {"metadata": {"name": f"{shard}-{index}", "labels": {LABEL: shard}}, "data": {"index": str(index)}}
    try:
        core.create_namespaced_config_map(NAMESPACE, body)
    except client.ApiException as exc:
        if exc.status != 409:
            raise


def delete_child(core: client.CoreV1Api, name: str) -> None:
    try:
        core.delete_namespaced_config_map(name, NAMESPACE)
    except client.ApiException as exc:
        if exc.status != 404:
            raise


def watch_loop(on_list: Callable[[list], None], on_event: Callable[[str, dict], None]) -> None:
    custom = client.CustomObjectsApi()
    while True:
        try:
            listed = custom.list_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL)
            on_list(listed["items"])
            stream = watch.Watch().stream(custom.list_namespaced_custom_object, GROUP, VERSION, NAMESPACE, PLURAL,
                                          resource_version=listed["metadata"]["resourceVersion"],
                                          timeout_seconds=WATCH_TIMEOUT_S)
            for event in stream:
                on_event(event["type"], event["object"])
        except client.ApiException as exc:  # 410 Expired, a refused or failed request: list again
            logging.info("listing again after %s %s", exc.status, exc.reason)
        except Exception as exc:  # a broken connection
            logging.info("listing again after %s", exc)


def run(on_list: Callable[[list], None], on_event: Callable[[str, dict], None]) -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(asctime)s %(message)s")
    config.load_kube_config()
    identity = f"{socket.gethostname()}-{os.getpid()}"

    def lost() -> None:
        logging.info("leadership lost: exiting")
        os._exit(1)

    election = electionconfig.Config(LeaseLock("shard-operator", NAMESPACE, identity), lease_duration=3,
                                     renew_deadline=2, retry_period=1,
                                     onstarted_leading=lambda: watch_loop(on_list, on_event),
                                     onstopped_leading=lost)
    leaderelection.LeaderElection(election).run()
    lost()
