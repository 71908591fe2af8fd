"""Determinism is a feature with a test (principle 6).

A scripted run (counter clients and a server with retry timers and watch streams, a ping-pong pair, a
gossip component that keeps its peers in a set of strings, and faults: partitions, drops, delays, broken
streams, crashes and restarts, chosen by a seeded random.Random over the loop's menus) is executed in
fresh interpreters under different PYTHONHASHSEED values; the digests, the event counts and a fingerprint
of the components' final state must be byte-identical. A run with a different script must differ.

Run directly (``python tests/test_determinism.py SEED``) it prints the run's result as one JSON line.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kmodel.component import Component  # noqa: E402
from kmodel.component.example import CounterClient, CounterServer, Echo, Pinger  # noqa: E402
from kmodel.loop import DelayHead, Heal, HealAll, Loop, Partition, Restart  # noqa: E402


class Gossip(Component):
    """Learns peers from messages into a *set* of strings and tells every known peer what it knows.
    Iterating the set directly would make the run depend on PYTHONHASHSEED; it sends in sorted order."""

    def __init__(self, name: str, seeds: list[str]) -> None:
        super().__init__(name)
        self.seeds = seeds
        self.known: set[str] = set()

    def start(self, now, out):
        self.known = set(self.seeds)
        out.set_timer("gossip", 40)

    def on_message(self, now, msg, out):
        self.known.update(msg.payload)
        self.known.add(msg.src)
        self.known.discard(self.name)

    def on_timer(self, now, name, out):
        for peer in sorted(self.known):
            out.send(peer, sorted(self.known | {self.name}))
        out.set_timer("gossip", 40)

    def crash(self):
        self.known = set()


def scripted_run(seed: int, steps: int = 600) -> dict:
    rng = random.Random(seed)
    server = CounterServer("server")
    clients = [CounterClient(f"client-{i}", "server", retry_ms=50 + 10 * i) for i in range(3)]
    gossips = [Gossip(f"gossip-{i}", [f"gossip-{(i + 1) % 4}"]) for i in range(4)]
    others = [Pinger("pinger", "echo", rounds=50), Echo("echo")]
    loop = Loop(components={server, *clients, *gossips, *others})  # a set, on purpose
    endpoints = loop.network.endpoints
    for step in range(steps):
        if step % 25 == 0:
            client = clients[rng.randrange(len(clients))]
            client.enqueue(rng.randrange(1, 4))
            loop.notify_work(client.name)
        menu = loop.enabled_events()
        roll = rng.random()
        if roll < 0.08:
            menu = loop.enabled_faults() or menu
        elif roll < 0.10:
            menu = [Partition(rng.sample(endpoints, rng.randrange(1, 4)))]
        elif roll < 0.12:
            menu = [Heal(rng.sample(endpoints, 2))]
        elif roll < 0.14 and loop.network.nonempty_links():
            src, dst = rng.choice(loop.network.nonempty_links())
            menu = [DelayHead(src, dst, rng.randrange(1, 200))]
        if not menu:
            break
        loop.step(rng.choice(menu))
    # Heal everything and let the system settle, as liveness checks will.
    if loop.network.partitioned:
        loop.step(HealAll())
    for name in sorted(loop.components):
        if not loop.is_up(name):
            loop.step(Restart(name))
    loop.run_fair(until_ms=loop.now + 2_000)
    fingerprint = {
        "now": loop.now,
        "server": [server.value, sorted(server.applied.items()), list(server.watches)],
        "clients": [[c.acked, c.seen, c.watch_stream] for c in clients],
        "gossip": [sorted(g.known) for g in gossips],
        "pinger": others[0].received,
        "counts": [[src, dst, n] for (src, dst), n in loop.network.communication_counts().items()],
        "messages": loop.network.messages_sent,
    }
    return {"digest": loop.digest(), "events": loop.events_applied, "state": fingerprint}


def run_in_subprocess(seed: int, hashseed: str) -> str:
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    result = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), str(seed)],
        env=env, cwd=ROOT, capture_output=True, text=True, check=True,
    )
    return result.stdout.strip()


def test_same_run_same_digest_under_any_hash_seed():
    outputs = {h: run_in_subprocess(7, h) for h in ("0", "1", "2", "random")}
    assert len(set(outputs.values())) == 1, outputs
    result = json.loads(outputs["0"])
    assert result["events"] > 600  # the scripted steps plus the fair settling
    assert result["state"]["server"][0] > 0  # work happened; faults did not stop everything


def test_a_different_run_gives_a_different_digest():
    assert json.loads(run_in_subprocess(7, "0"))["digest"] != json.loads(run_in_subprocess(8, "0"))["digest"]


def test_in_process_run_matches_the_subprocess_run():
    assert json.dumps(scripted_run(7)) == run_in_subprocess(7, "3")


if __name__ == "__main__":
    print(json.dumps(scripted_run(int(sys.argv[1]))))
