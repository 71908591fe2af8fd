"""Time and peak memory of simulating a whole cluster until every pod runs.

Run: python benchmarks/bench_cluster.py [--nodes 100] [--pods 3000] [--deployments 30] [--profile] [--memory]
     python benchmarks/bench_cluster.py --sizes 1000x30000,5000x150000 [--ab REV] [--deployments 30]

Builds a default cluster (every component), applies `--deployments` Deployments sharing `--pods` replicas,
and runs fairly in steps of 10 s of logical time until every pod is Running. Prints wall time, the process's
CPU time (steadier than wall time on a machine others share), loop events, events per second, logical time
reached, the resident memory of the process once the cluster is built (nodes, no pods yet), its peak, and the
memory per pod: the growth from the first to the second over the pods.

`--sizes NODESxPODS,...` runs each size in its own subprocess (so each peak memory is that size's alone) and
then prints, for each size after the first, how its wall time, events and memory compare with the first's: a
wall-time ratio equal to the pod ratio means the cost per pod stays flat as the cluster grows. `--ab REV` runs
the same sizes on the commit REV too, from a temporary `git worktree` of it (removed afterwards), alternating
REV and this checkout size by size, and prints how much faster this checkout is. `--profile` prints the
functions with the most time of their own (cProfile); `--memory` the allocation sites holding the most memory
when every pod runs (tracemalloc, which slows the run several times). No assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[1]


def deployment(name: str, replicas: int) -> Any:
    from kmodel.objects import (
        Container, Deployment, DeploymentSpec, LabelSelector, ObjectMeta, PodSpec, PodTemplateSpec, frozen_map,
        parse_quantity,
    )
    from kmodel.objects.core import ResourceRequirements

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


def peak_rss_mib() -> float:
    """The process's peak resident memory (ru_maxrss is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pods_running(cluster: Any) -> int:
    """How many pods of the default namespace are Running, read with Store.peek: no etcd request, so the check
    leaves nothing on the store's history (a range there would keep every pod it read for the rest of the run)."""
    from kmodel.apiserver.resources import RESOURCES, list_prefix
    from kmodel.store import prefix_end

    prefix = list_prefix(RESOURCES["pods"], "default")
    return sum(1 for kv in cluster.store.peek(prefix, prefix_end(prefix)) if kv.value.status.phase == "Running")


def run(nodes: int, pods: int, deployments: int, on_settled: Any = None) -> dict:
    """Simulate the cluster until every pod runs (or four hours of logical time pass); the figures of the run.
    `on_settled(cluster)` is called at the end, before the figures are taken (the memory snapshot)."""
    from kmodel.cluster import Cluster, ClusterConfig

    t0 = time.perf_counter()
    cpu0 = time.process_time()
    cluster = Cluster(ClusterConfig(nodes=nodes, cluster_cidr=cluster_cidr(nodes)))
    boot_rss = peak_rss_mib()
    per = pods // deployments
    cluster.apply([deployment(f"app-{i}", per + (1 if i < pods % deployments else 0)) for i in range(deployments)])
    events = 0
    running = 0
    while cluster.now < 3_600_000 * 4:
        events += cluster.run(cluster.now + 10_000)
        running = pods_running(cluster)
        if running >= pods:
            break
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    if on_settled is not None:
        on_settled(cluster)
    rss = peak_rss_mib()
    return {"nodes": nodes, "pods": pods, "cluster_cidr": cluster_cidr(nodes), "pods_running": running,
            "logical_s": cluster.now / 1000, "wall_s": wall, "cpu_s": cpu, "loop_events": events,
            "events_per_s": events / wall,
            "api_requests": len(cluster.audit.records), "boot_rss_mib": boot_rss, "peak_rss_mib": rss,
            "kib_per_pod": (rss - boot_rss) * 1024 / max(pods, 1)}


def parse_sizes(text: str) -> list[tuple[int, int]]:
    """'1000x30000,5000x150000' -> [(1000, 30000), (5000, 150000)]; ValueError naming the bad item."""
    pairs = []
    for item in text.split(","):
        nodes, sep, pods = item.strip().partition("x")
        if not sep or not nodes.isdigit() or not pods.isdigit() or int(nodes) < 1 or int(pods) < 1:
            raise ValueError(f"--sizes takes NODESxPODS pairs such as 1000x30000,5000x150000, not {item!r}")
        pairs.append((int(nodes), int(pods)))
    return pairs


def fail(message: str) -> None:
    """A one-line error and exit code 2, as argparse's own errors."""
    print(f"bench_cluster.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def child(root: Path, nodes: int, pods: int, deployments: int) -> dict:
    """Run one size in a fresh interpreter importing kmodel from `root` (this checkout or a worktree of REV);
    its last output line is the figures as JSON."""
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONHASHSEED="0")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(root), "--nodes", str(nodes),
           "--pods", str(pods), "--deployments", str(deployments)]
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        print(done.stderr.strip()[-2000:], file=sys.stderr)
        fail(f"the {nodes}x{pods} run on {root} failed (its output is above)")
    return json.loads(done.stdout.strip().splitlines()[-1])


def print_figures(result: dict, indent: str = "  ") -> None:
    for key, value in result.items():
        if isinstance(value, str):
            print(f"{indent}{key:<16} {value}")
        elif isinstance(value, float):
            print(f"{indent}{key:<16} {value:,.1f}")
        else:
            print(f"{indent}{key:<16} {value:,}")


def print_ratios(label: str, results: list[dict]) -> None:
    """Each size against the first: pods, wall time, events and peak memory as multiples of the first's."""
    base = results[0]
    for r in results[1:]:
        print(f"{label}: {r['nodes']}x{r['pods']} against {base['nodes']}x{base['pods']}: "
              f"pods x{r['pods'] / base['pods']:.2f}, wall time x{r['wall_s'] / base['wall_s']:.2f}, "
              f"CPU time x{r['cpu_s'] / base['cpu_s']:.2f}, "
              f"events x{r['loop_events'] / base['loop_events']:.2f}, "
              f"peak memory x{r['peak_rss_mib'] / base['peak_rss_mib']:.2f}")


def sizes(args: argparse.Namespace, pairs: list[tuple[int, int]]) -> None:
    """--sizes (and --ab): every size in its own subprocess, then the ratios."""
    trees: list[tuple[str, Path]] = [("this checkout", ROOT)]
    worktree: Optional[Path] = None
    if args.ab:
        worktree = Path(tempfile.mkdtemp(prefix="bench-cluster-ab-")) / "tree"
        done = subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(worktree), args.ab],
                              capture_output=True, text=True)
        if done.returncode != 0:
            shutil.rmtree(worktree.parent, ignore_errors=True)
            fail(f"--ab cannot check out {args.ab!r} ({done.stderr.strip().splitlines()[-1]}): name a commit of "
                 f"this repository")
        trees.insert(0, (args.ab, worktree))
    results: dict[str, list[dict]] = {label: [] for label, _ in trees}
    try:
        for nodes, pods in pairs:
            for label, tree in trees:
                print(f"{label}: {nodes} nodes, {pods} pods ...", flush=True)
                r = child(tree, nodes, pods, args.deployments)
                print_figures(r)
                results[label].append(r)
    finally:
        if worktree is not None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)],
                           capture_output=True)
            shutil.rmtree(worktree.parent, ignore_errors=True)
    for label, _ in trees:
        if len(results[label]) > 1:
            print_ratios(label, results[label])
    if args.ab:
        for new, old in zip(results["this checkout"], results[args.ab]):
            print(f"{new['nodes']}x{new['pods']}: this checkout {new['wall_s']:.1f} s ({new['cpu_s']:.1f} s CPU), "
                  f"{new['peak_rss_mib']:.0f} MiB; {args.ab} {old['wall_s']:.1f} s ({old['cpu_s']:.1f} s CPU), "
                  f"{old['peak_rss_mib']:.0f} MiB: {old['wall_s'] / new['wall_s']:.2f} times faster in wall time, "
                  f"{old['cpu_s'] / new['cpu_s']:.2f} in CPU time, "
                  f"memory x{new['peak_rss_mib'] / old['peak_rss_mib']:.2f}")


def memory_profile(args: argparse.Namespace) -> None:
    """--memory: the 25 allocation sites holding the most memory once every pod runs."""
    import tracemalloc

    snapshot: list = []
    tracemalloc.start()
    result = run(args.nodes, args.pods, args.deployments,
                 on_settled=lambda cluster: snapshot.append(tracemalloc.take_snapshot()))
    stats = snapshot[0].statistics("lineno")
    total = sum(s.size for s in stats)
    print(f"traced memory when every pod runs: {total / 2**20:,.1f} MiB, {total / max(args.pods, 1) / 1024:,.2f} KiB "
          f"per pod")
    for s in stats[:25]:
        print(f"  {s.size / 2**20:8.1f} MiB {s.count:>10,} blocks  {s.traceback[0]}")
    print_figures(result)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--pods", type=int, default=3000)
    parser.add_argument("--deployments", type=int, default=30)
    parser.add_argument("--sizes", default="", help="NODESxPODS,... each in its own subprocess, then the ratios")
    parser.add_argument("--ab", default="", metavar="REV", help="with --sizes: the same on commit REV too")
    parser.add_argument("--profile", action="store_true", help="cProfile: the functions with the most own time")
    parser.add_argument("--memory", action="store_true", help="tracemalloc: the sites holding the most memory")
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)  # the tree to import kmodel from
    args = parser.parse_args()
    if args.ab and not args.sizes:
        parser.error("--ab REV compares sizes: give --sizes too, e.g. --sizes 1000x30000 --ab 7c1f8c2")
    if args.child:
        sys.path.insert(0, args.child)
        print(json.dumps(run(args.nodes, args.pods, args.deployments)))
        return
    sys.path.insert(0, str(ROOT))
    if args.sizes:
        try:
            pairs = parse_sizes(args.sizes)
        except ValueError as e:
            parser.error(str(e))
        sizes(args, pairs)
    elif args.profile:
        import cProfile
        import pstats

        cProfile.runctx("run(args.nodes, args.pods, args.deployments)", globals(), locals(), "/tmp/bench_cluster.prof")
        pstats.Stats("/tmp/bench_cluster.prof").sort_stats("tottime").print_stats(30)
    elif args.memory:
        memory_profile(args)
    else:
        print_figures(run(args.nodes, args.pods, args.deployments))


if __name__ == "__main__":
    main()
