"""Loop throughput: events per second for two components exchanging messages, and the same with many
idle endpoints, links and timers present (the cost per event should stay flat).

Run: python benchmarks/bench_loop.py [--rounds N] [--profile] [--effects]

--effects compares the two shapes considered for handler effects (kmodel.component.effects): handlers
returning a fresh list of effects, or appending to an `Out` object the loop reuses.

Prints one line per case: events applied, seconds, events per second. Figures are measured here, never
asserted in tests.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kmodel.component import Component  # noqa: E402
from kmodel.component.example import Echo, Pinger  # noqa: E402
from kmodel.loop import Loop  # noqa: E402


def build(rounds: int, idle: int) -> Loop:
    components = [Pinger("pinger", "echo", rounds), Echo("echo")]
    components += [Component(f"idle-{i}") for i in range(idle)]  # receives, never answers
    loop = Loop(components=components)
    if idle:
        # Give every idle endpoint a used (now empty) link and a far-future timer, so the network and
        # the clock hold `idle` links and timers that a per-step scan would have to walk.
        for i in range(idle):
            loop.network.send("echo", f"idle-{i}", "hello")
            loop.clock.set_at(f"idle-{i}", "resync", 10**9 + i)
        for i in range(idle):
            loop.network.deliver("echo", f"idle-{i}")
    return loop


def run_fair(loop: Loop) -> int:
    return loop.run_fair(until_ms=0)


def run_stepped(loop: Loop) -> int:
    n = 0
    while True:
        events = loop.enabled_events()
        if not events or events[0].kind == "advance_time":
            return n
        loop.step(events[0])
        n += 1


def measure(label: str, driver, rounds: int, idle: int) -> float:
    loop = build(rounds, idle)
    before = loop.events_applied
    start = time.perf_counter()
    driver(loop)
    elapsed = time.perf_counter() - start
    n = loop.events_applied - before
    rate = n / elapsed
    print(f"{label:48s} {n:>9,} events {elapsed:7.3f} s {rate:>11,.0f} events/s")
    return rate


def effect_shapes(n: int = 300_000) -> None:
    """Time one handler call that asks for one Send, plus the loop's dispatch over the effects."""
    import timeit

    from kmodel.component import Out, Send

    def apply(effects):
        for effect in effects:
            if type(effect) is Send:
                effect.dst

    def returning_handler():
        return [Send("b", 1)]

    def out_handler(out):
        out.send("b", 1)

    def via_return():
        apply(returning_handler())

    shared = Out()

    def via_out_take():
        out_handler(shared)
        if shared.effects:
            apply(shared.take())

    def via_out_clear():  # what the loop does: apply, then clear the shared list
        out_handler(shared)
        effects = shared.effects
        if effects:
            apply(effects)
            effects.clear()

    for label, fn in (
        ("handler returns [Send(...)]", via_return),
        ("out.send(...), loop takes list", via_out_take),
        ("out.send(...), loop clears list", via_out_clear),
    ):
        best = min(timeit.repeat(fn, number=n, repeat=5))
        print(f"{label:32s} {best / n * 1e9:6.0f} ns per call")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100_000, help="ping-pong round trips per case")
    parser.add_argument("--profile", action="store_true", help="cProfile the run_fair case instead")
    parser.add_argument("--effects", action="store_true", help="compare the effect shapes instead")
    args = parser.parse_args()
    if args.effects:
        effect_shapes()
        return
    if args.profile:
        loop = build(args.rounds, 0)
        profiler = cProfile.Profile()
        profiler.runcall(run_fair, loop)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
        return
    print(f"python {sys.version.split()[0]}, {args.rounds:,} ping-pong round trips per case")
    for idle in (0, 1_000, 10_000):
        measure(f"run_fair, 2 talking + {idle:,} idle endpoints", run_fair, args.rounds, idle)
        measure(f"step(enabled_events()[0]), + {idle:,} idle", run_stepped, args.rounds, idle)


if __name__ == "__main__":
    main()
