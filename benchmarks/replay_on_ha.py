"""Replay every upstream-bug trace (the fixes' traces, kmodel.fixes) on an electing control plane, the default one
or a highly available one, and say whether each still fails with its invariant.

Run: python benchmarks/replay_on_ha.py [--controller-managers N] [--schedulers N] [NAME-PART ...]

Each trace runs twice in lockstep: on its own configuration, and with leader election on and `controller_managers`
and `schedulers` set (default 1 each: the default cluster's lone electing copy of each, which exits when it cannot
renew and is restarted; 2 each: a standby takes over). Before each step, what the trace took from its own run is
translated to the same thing in the electing one: a component or process of the first kube-controller-manager or
scheduler to the copy that leads now, a generated pod name to the pod of the same owner created in the same order,
and a compaction's revision to the revision of the same write (the Leases' renewals move every revision). Steps run
as the minimizer runs them (`execute_leniently`: loop events not enabled when their turn comes are skipped).
Prints, per trace, whether it fails as it must ("holds") or not, the steps that lost events (or the step it could
not take at all, where it stops), and each time a process exited on its own (a leader that could not renew its
Lease). A dev tool: the figures are for reading, nothing is asserted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import attrs  # noqa: E402

from kmodel.checker.action_json import action_from_json  # noqa: E402
from kmodel.checker.actions import Compact  # noqa: E402
from kmodel.checker.minimize import execute_leniently  # noqa: E402
from kmodel.checker.session import InvariantViolation, Session, TraceDiverged, all_invariants  # noqa: E402
from kmodel.checker.trace import fitted, read_trace  # noqa: E402
from kmodel.cluster import Cluster  # noqa: E402
from kmodel.fixes import FIXES  # noqa: E402

REGRESSIONS = Path(__file__).resolve().parents[1] / "tests" / "regressions"
PODS = "/registry/pods/"


def leader_names(cluster: Cluster) -> dict[str, str]:
    """First copy's names -> the leading copy's, where another copy leads now."""
    names: dict[str, str] = {}
    acting = cluster.acting("controller/deployment")
    if acting and not acting.startswith("controller/"):
        copy = acting.split("/")[0]  # controller-2
        names["controller/"] = copy + "/"
        names["kube-controller-manager"] = "kube-controller-manager-" + copy.split("-")[1]
    scheduler = cluster.acting("scheduler")
    if scheduler and scheduler != "scheduler":
        names["scheduler"] = scheduler
    return names


def pod_order(cluster: Cluster) -> tuple[dict[str, tuple[str, int]], dict[tuple[str, int], str]]:
    """Every pod the store holds a version of, as (its name's prefix, its rank by creation) and back."""
    ranked: dict[str, list[tuple[int, str]]] = {}
    for key, versions in cluster.store._keys.versions.items():  # noqa: SLF001 (a dev tool reads the store's history)
        if key.startswith(PODS) and versions:
            name = key.rsplit("/", 1)[1]
            ranked.setdefault(name.rsplit("-", 1)[0], []).append((versions[0].create_revision, name))
    forward, back = {}, {}
    for prefix, items in ranked.items():
        for i, (_, name) in enumerate(sorted(items)):
            forward[name], back[(prefix, i)] = (prefix, i), name
    return forward, back


def translate(value: Any, names: dict[str, str], pods: dict, back: dict) -> Any:
    if isinstance(value, str):
        if value in names:
            return names[value]
        if value.startswith("controller/") and "controller/" in names:
            return names["controller/"] + value[len("controller/"):]
        if value in pods and pods[value] in back:
            return back[pods[value]]
        return value
    if isinstance(value, list):
        return [translate(v, names, pods, back) for v in value]
    if isinstance(value, dict):
        return {k: translate(v, names, pods, back) for k, v in value.items()}
    return value


def same_write(revision: int, own: Cluster, ha: Cluster, pods: dict, back: dict) -> Optional[int]:
    """The revision in `ha` of the write `own` made at `revision` (the same key's same version), if made yet."""
    for key, versions in own.store._keys.versions.items():  # noqa: SLF001
        for i, kv in enumerate(versions):
            if kv.mod_revision == revision:
                if key.startswith(PODS):
                    namespace, name = key[len(PODS):].split("/")
                    if pods.get(name) in back:
                        key = f"{PODS}{namespace}/{back[pods[name]]}"
                theirs = ha.store._keys.versions.get(key, [])  # noqa: SLF001
                return theirs[i].mod_revision if i < len(theirs) else None
    return None


def replay_on_ha(path: Path, controller_managers: int, schedulers: int) -> None:
    trace = read_trace(path)
    invariants = all_invariants()
    own = Session(trace.config, invariants, variant=trace.variant, record_messages=False)
    config = attrs.evolve(trace.config, controller_managers=controller_managers, schedulers=schedulers,
                          leader_elect=True)
    ha = Session(config, invariants, variant=trace.variant, record_messages=False)
    trace = fitted(trace, own.boot_revision)
    loop = ha.cluster.loop
    exits: list[tuple[int, str]] = []
    exit_processes = loop._exit  # noqa: SLF001 (observed, not changed)

    def noting_exits(effects: list) -> None:
        exits.extend((loop.clock.now, e.members[0]) for e in effects)
        exit_processes(effects)

    loop._exit = noting_exits  # type: ignore[method-assign]  # noqa: SLF001
    violation, own_violation, notes, diverged = None, None, [], 0
    for i, action in enumerate(trace.actions):
        pods, _ = pod_order(own.cluster)
        _, back = pod_order(ha.cluster)
        data = action.to_json()
        moved = translate(data, leader_names(ha.cluster), pods, back)
        if isinstance(action, Compact):
            revision = same_write(action.revision, own.cluster, ha.cluster, pods, back)
            if revision is not None:
                moved["revision"] = revision
        theirs = action_from_json(moved) if moved != data else action
        if own_violation is None:
            try:
                own.execute(action)
            except InvariantViolation as exc:
                own_violation = exc
        before = len(ha.actions)
        try:
            execute_leniently(ha, theirs)
        except InvariantViolation as exc:
            violation = exc
        except TraceDiverged as exc:  # a step the other run cannot take at all (a watch stream it never opened)
            notes.append(f"diverged: {str(exc)[:100]}")
            diverged = i + 1
            break
        if len(ha.actions) == before or ha.actions[-1] != theirs:
            notes.append(f"step {i + 1} lost events: {theirs.name[:100]}")
        if violation is not None:
            break
    expected = read_trace(path).expected_invariant
    verdict = ("holds" if violation is not None and violation.invariant == expected
               else f"fails with {violation.invariant}" if violation is not None
               else f"not shown: step {diverged} cannot be taken" if diverged else "passes")
    print(f"{path.name}: {expected}: {verdict}")
    for at, process in exits:
        print(f"    {process} exited at {at / 1000:g} s")
    for note in notes:
        print(f"    {note}")
    own.dispose()
    ha.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--controller-managers", type=int, default=1)
    parser.add_argument("--schedulers", type=int, default=1)
    parser.add_argument("names", nargs="*", help="replay only the traces whose file name contains one of these")
    args = parser.parse_args()
    names = [t for f in FIXES for t in f.traces]
    names = [n for n in dict.fromkeys(names) if not args.names or any(part in n for part in args.names)]
    for name in names:
        replay_on_ha(REGRESSIONS / name, args.controller_managers, args.schedulers)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
