"""Time spent checking the safety invariants after every loop event, against time spent in the model.

A scripted cluster (the seed scenarios' workload: the web-service example on N nodes, then a node cut off
for 6 minutes so that taint eviction runs, then healed) is stepped one enabled event at a time
(``loop.step(loop.enabled_events()[0])``, time advancing when nothing else is enabled); after each event every
registered safety invariant is checked with its own memo, as the checker does. Prints the events, the
seconds in the model and in the invariants, the invariants' share, and the five most expensive invariants.
At the end the liveness invariants are checked once.

Run: python benchmarks/bench_invariants.py [nodes] [replicas] [--detail]   (--detail: time each invariant)
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

import attrs

import kmodel.invariants  # noqa: F401  (registers them)
from kmodel.invariants.registry import LIVENESS, SAFETY, registered
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Scale
from kmodel.objects import load_yaml

S = 1000
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def main(nodes: int = 5, replicas: int = 20, detail: bool = False) -> None:
    cluster = Cluster(ClusterConfig(nodes=nodes, apiservers=2))
    objs = load_yaml((EXAMPLES / "web-service.yaml").read_text())
    cluster.apply(objs)
    safety = registered(SAFETY)
    memos = {inv.name: {} for inv in safety}
    per: Counter = Counter()
    model = checks = 0.0
    events = 0
    violations: list = []

    def step_until(until_ms: int) -> None:
        nonlocal model, checks, events
        loop = cluster.loop
        while True:
            t0 = time.perf_counter()
            enabled = loop.enabled_events()
            if not enabled or loop.now >= until_ms:
                model += time.perf_counter() - t0
                return
            loop.step(enabled[0])
            t1 = time.perf_counter()
            model += t1 - t0
            events += 1
            if detail:
                for inv in safety:
                    s = time.perf_counter()
                    for message in inv.check(cluster, memos[inv.name]):
                        violations.append((inv.name, message))
                    per[inv.name] += time.perf_counter() - s
            else:
                for inv in safety:
                    for message in inv.check(cluster, memos[inv.name]):
                        violations.append((inv.name, message))
            checks += time.perf_counter() - t1

    step_until(60 * S)
    cluster.submit(Scale("deployments", "default", "storefront", replicas))
    step_until(cluster.now + 60 * S)
    cluster.partition(f"node-{min(2, nodes)}")
    step_until(cluster.now + 400 * S)
    cluster.heal(f"node-{min(2, nodes)}")
    step_until(cluster.now + 120 * S)

    total = model + checks
    print(f"cluster: {nodes} nodes, 2 API servers, storefront scaled to {replicas}; {events} events, "
          f"{len(cluster.store.history)} store requests, {len(cluster.audit.records)} audit records")
    print(f"model       {model:8.3f} s  ({model / events * 1e6:7.1f} us/event)")
    print(f"invariants  {checks:8.3f} s  ({checks / events * 1e6:7.1f} us/event, {len(safety)} safety invariants)")
    print(f"share of time in invariant checks: {checks / total:.1%}")
    if detail:
        print("most expensive (timed one by one, which adds ~1 us each):",
              ", ".join(f"{name} {t * 1e6 / events:.1f} us/event" for name, t in per.most_common(6)))
    print(f"safety violations: {len(violations)}")
    for name, message in violations[:5]:
        print(f"  {name}: {message}")
    t = time.perf_counter()
    live = {inv.name: list(inv.check(cluster, {})) for inv in registered(LIVENESS)}
    print(f"liveness checks once: {time.perf_counter() - t:.3f} s; failing: "
          f"{sorted(n for n, m in live.items() if m) or 'none'}")


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:] if a.isdigit()]
    main(*numbers[:2], detail="--detail" in sys.argv)
