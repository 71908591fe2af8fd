"""Time and peak memory of simulating a whole cluster until every pod runs.

Run: python benchmarks/bench_cluster.py [--nodes 100] [--pods 3000] [--deployments 30] [--profile]

Builds a default cluster (every component), applies `--deployments` Deployments sharing `--pods` replicas,
and runs fairly in steps of 10 s of logical time until every pod is Running. Prints wall time, loop events,
events per second, logical time reached and the peak resident memory of the process. No assertions.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kmodel.cluster import Cluster, ClusterConfig  # noqa: E402
from kmodel.objects import (  # noqa: E402
    Container, Deployment, DeploymentSpec, LabelSelector, ObjectMeta, PodSpec, PodTemplateSpec, frozen_map,
    parse_quantity,
)
from kmodel.objects.core import ResourceRequirements  # noqa: E402


def deployment(name: str, replicas: int) -> Deployment:
    labels = frozen_map({"app": name})
    container = Container(name="app", image="registry.example/app:1",
                          resources=ResourceRequirements(requests=frozen_map(
                              {"cpu": parse_quantity("10m"), "memory": parse_quantity("16Mi")})))
    return Deployment(metadata=ObjectMeta(name=name, namespace="default"),
                      spec=DeploymentSpec(replicas=replicas, selector=LabelSelector(match_labels=labels),
                                          template=PodTemplateSpec(metadata=ObjectMeta(labels=labels),
                                                                   spec=PodSpec(containers=(container,)))))


def cluster_cidr(nodes: int) -> str:
    """A cluster CIDR with a /24 for every node: the default /16 holds 256 (node IPAM refuses the rest with
    CIDRNotAvailable, and their pods wait for a network for good, as in a real cluster); beyond that a /9
    (32,768 blocks, clear of the service CIDR 10.96.0.0/12)."""
    return "10.244.0.0/16" if nodes <= 256 else "10.128.0.0/9"


def run(nodes: int, pods: int, deployments: int) -> dict:
    t0 = time.perf_counter()
    cluster = Cluster(ClusterConfig(nodes=nodes, cluster_cidr=cluster_cidr(nodes)))
    per = pods // deployments
    cluster.apply([deployment(f"app-{i}", per + (1 if i < pods % deployments else 0)) for i in range(deployments)])
    events = 0
    running = 0
    while cluster.now < 3_600_000:
        events += cluster.run(cluster.now + 10_000)
        running = sum(1 for p in cluster.objects("pods", "default") if p.status.phase == "Running")
        if running >= pods:
            break
    wall = time.perf_counter() - t0
    return {"nodes": nodes, "cluster_cidr": cluster_cidr(nodes), "pods_running": running, "logical_s": cluster.now / 1000, "wall_s": wall,
            "loop_events": events, "events_per_s": events / wall,
            "api_requests": len(cluster.audit.records),
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--pods", type=int, default=3000)
    parser.add_argument("--deployments", type=int, default=30)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    if args.profile:
        cProfile.runctx("run(args.nodes, args.pods, args.deployments)", globals(), locals(), "/tmp/bench_cluster.prof")
        pstats.Stats("/tmp/bench_cluster.prof").sort_stats("tottime").print_stats(30)
        return
    result = run(args.nodes, args.pods, args.deployments)
    for key, value in result.items():
        if isinstance(value, str):
            print(f"  {key:<16} {value}")
        else:
            print(f"  {key:<16} {value:,.1f}" if isinstance(value, float) else f"  {key:<16} {value:,}")


if __name__ == "__main__":
    main()
