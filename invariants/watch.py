"""Watch invariants: etcd's four watch guarantees, and informers that never travel back in time.

The watch guarantees are checked the way etcd's robustness tests check them (tests/robustness/validate),
on what each API server replica's watch cache actually received from etcd (`APIServerReplica.etcd_received`:
the start revision of each watch it opened and every response it applied), against the store's history.
Within a watch stream: events come in revision order (and, within a revision, in the order the txn made
them); no event comes twice; every revision from the watch's start to the newest one received is there
(inside the history window: a watch that started at the compaction revision may miss that revision's
deletions); and all the events of one revision come in one response.

One `_WatchState` (in the run's shared memo, `registry.SHARED`, so the four guarantees read each input once;
in each guarantee's own memo when there is none) reads the history and the received responses
incrementally, and keeps one list of violations per guarantee.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from kmodel.invariants._history import change_feed, stored_since
from kmodel.invariants import _paths
from kmodel.invariants.records import declares, record
from kmodel.invariants.inputs import ETCD_RECEIVED, MODEL_EVENTS, writes
from kmodel.invariants.registry import SAFETY, SHARED, invariant
from kmodel.apiserver import etcd_log
from kmodel.apiserver.etcd_log import EtcdLog
from kmodel.client.informer import Informer

REGISTRY = "/registry/"
GUARANTEES = ("ordered", "unique", "reliable", "atomic")


class _Stream:
    __slots__ = ("start", "next_rev", "last", "seen", "revisions", "floor", "ended")

    def __init__(self, start: int, floor: int) -> None:
        self.start = start
        self.next_rev = start  # the oldest revision not received yet
        self.last = (0, -1)  # (revision, position within it) of the last event received
        self.seen: set = set()  # (revision, key) received (only revisions >= next_rev - window are kept)
        self.revisions: set = set()  # revisions received (in earlier responses)
        self.floor = floor  # the compaction revision when the watch was first seen
        self.ended = False


class _WatchState:
    """Shared per check-memo: the store's changes per revision (under /registry/) and each stream's progress."""

    def __init__(self, memo: dict) -> None:
        self.reader = change_feed(memo, (REGISTRY,))
        self.revs: dict[int, list[tuple[str, bool]]] = {}  # revision -> [(key, is_delete)] in store order
        self.positions: dict[str, int] = {}  # replica -> entries of etcd_received read
        self.streams: dict[tuple[str, str], _Stream] = {}
        self.bad: dict[str, list[str]] = {g: [] for g in GUARANTEES}

    def update(self, cluster: Any) -> None:
        if not self.reader.has_news(cluster.store) and all(
                self.positions.get(r.name, 0) == len(record(r, "etcd_received")) for r in cluster.replicas):
            return
        revs = self.revs
        for ch in self.reader.read(cluster.store):
            revs.setdefault(ch.rev, []).append((ch.key, ch.value is None))
        for replica in cluster.replicas:
            log = record(replica, "etcd_received")
            start = self.positions.get(replica.name, 0)
            if start == len(log):
                continue
            self.positions[replica.name] = len(log)
            if _paths.REFERENCE or type(log) is not EtcdLog:
                entries = log[start:]
            else:
                entries = stored_since(log, start)
            for entry in entries:
                if etcd_log.is_compact(entry):  # a response of one event, its fields as stored
                    stream_id, canceled, kvs = entry[etcd_log.STREAM], entry[etcd_log.CANCELED], (entry[etcd_log.KV],)
                else:
                    stream_id, item = entry
                    if isinstance(item, int):
                        self.streams[(replica.name, stream_id)] = _Stream(item, cluster.store.compact_revision)
                        continue
                    canceled, kvs = item.canceled, [ev.kv for ev in item.events]
                s = self.streams.get((replica.name, stream_id))
                if s is not None:
                    self._response(replica.name, stream_id, s, canceled, kvs)

    def _response(self, replica: str, stream_id: str, s: _Stream, canceled: bool, kvs: Any) -> None:
        """Judge one response of a stream: `canceled`, and the KeyValues of its events, in order."""
        if canceled:
            s.ended = True
            return
        if not kvs:
            return  # a progress notification
        bad = self.bad
        revs = self.revs
        by_rev: dict[int, list[str]] = {}
        for kv in kvs:
            rev, key = kv.mod_revision, kv.key
            position = -1  # the event's place among its revision's changes
            for i, (k, _) in enumerate(revs.get(rev, ())):
                if k == key:
                    position = i
                    break
            if (rev, position) <= s.last:
                bad["ordered"].append(f"{_where(replica, stream_id, s)}: event {key}@{rev} came after {s.last[0]} "
                                      f"(position {s.last[1]} in its revision)")
            if (rev, key) in s.seen:
                bad["unique"].append(f"{_where(replica, stream_id, s)}: event {key}@{rev} was delivered twice")
            s.seen.add((rev, key))
            if position < 0:
                bad["reliable"].append(f"{_where(replica, stream_id, s)}: event {key}@{rev} does not match any "
                                       "change the store made")
            s.last = max(s.last, (rev, position))
            by_rev.setdefault(rev, []).append(key)
        for rev, keys in by_rev.items():
            expected = [k for k, _ in revs.get(rev, [])]
            if rev in s.revisions:
                bad["atomic"].append(f"{_where(replica, stream_id, s)}: the events of revision {rev} were split "
                                     "over responses")
            elif keys != expected and rev > s.floor and sorted(keys) != sorted(expected):
                missing = sorted(set(expected) - set(keys))
                if missing:
                    bad["atomic"].append(f"{_where(replica, stream_id, s)}: revision {rev} came without "
                                         f"{', '.join(missing)} in its response (etcd sends a revision's events "
                                         "together)")
            s.revisions.add(rev)
            # reliable: every revision between the last one received and this one
            if rev >= s.next_rev:
                for gap in range(s.next_rev, rev):
                    changes = revs.get(gap)
                    if not changes:
                        continue
                    if gap < s.floor or (gap == s.floor and all(d for _, d in changes)):
                        continue  # outside the history window
                    bad["reliable"].append(f"{_where(replica, stream_id, s)}: revision {gap} "
                                           f"({', '.join(k for k, _ in changes)}) was never delivered, though "
                                           f"revision {rev} was")
                s.next_rev = rev + 1
        # forget `seen` entries that can no longer repeat legitimately (keep it small)
        if len(s.seen) > 4096:
            floor = s.next_rev - 1024
            s.seen = {x for x in s.seen if x[0] >= floor}
            s.revisions = {r for r in s.revisions if r >= floor}


def _where(replica: str, stream_id: str, s: _Stream) -> str:
    """Where a violation was seen, for its message (built only when there is one)."""
    return f"{replica} (etcd watch {stream_id}, from revision {s.start})"


def _state(cluster: Any, memo: dict) -> _WatchState:
    # The four guarantees read the same inputs: one state between them when the runner shares a dict
    # (registry.SHARED), else each its own. `update` reads only what is new, so the second to ask is free.
    home = memo.get(SHARED, memo)
    state = home.get("watch-state")
    if state is None:
        state = home["watch-state"] = _WatchState(memo)
    state.update(cluster)
    return state


@invariant("watch-ordered", kind=SAFETY, principle="watch, not poll",
           reads=(writes("/registry/"), ETCD_RECEIVED,))
def watch_ordered(cluster: Any, memo: dict) -> Iterator[str]:
    """Each API server's etcd watch receives events in revision order, and a revision's events in the order
    the store made them (etcd's Ordered guarantee)."""
    yield from _state(cluster, memo).bad["ordered"]


@invariant("watch-unique", kind=SAFETY, principle="watch, not poll",
           reads=(writes("/registry/"), ETCD_RECEIVED,))
def watch_unique(cluster: Any, memo: dict) -> Iterator[str]:
    """No event reaches an API server's etcd watch twice (etcd's Unique guarantee)."""
    yield from _state(cluster, memo).bad["unique"]


@invariant("watch-reliable", kind=SAFETY, principle="watch, not poll",
           reads=(writes("/registry/"), ETCD_RECEIVED,))
def watch_reliable(cluster: Any, memo: dict) -> Iterator[str]:
    """An API server's etcd watch never misses a revision between its start and the newest revision it received,
    inside the history window, and every event it receives is a change the store made (etcd's Reliable
    guarantee)."""
    yield from _state(cluster, memo).bad["reliable"]


@invariant("watch-atomic", kind=SAFETY, principle="watch, not poll",
           reads=(writes("/registry/"), ETCD_RECEIVED,))
def watch_atomic(cluster: Any, memo: dict) -> Iterator[str]:
    """All the events of one revision reach an API server's etcd watch in one response (etcd's Atomic
    guarantee)."""
    yield from _state(cluster, memo).bad["atomic"]


def informer_slots(component: Any) -> list[tuple[str, int]]:
    """Where a component keeps its informers: (attribute, -1) for an Informer attribute, (attribute, n) for a
    list attribute holding n informers (a controller's `informers`)."""
    slots = []
    for attr, value in vars(component).items():
        if isinstance(value, Informer):
            slots.append((attr, -1))
        elif isinstance(value, list) and value and isinstance(value[0], Informer):
            slots.append((attr, len(value)))
    return slots


def informers_of(component: Any) -> list:
    """The informers a component runs (in attributes, or in a list attribute such as `informers`): those on its own
    client. A controller also holds its process's shared informers, which the process's SharedInformers
    component runs (kmodel.controllers.shared_informers): they are that component's, judged once."""
    found: dict[int, Any] = {}
    client = record(component, "client") if declares(component, "client") else None
    for attr, n in informer_slots(component):
        value = getattr(component, attr)
        for inf in (value if n >= 0 else (value,)):
            if inf.client is client:
                found[id(inf)] = inf
    return list(found.values())


def informer_entries(cluster: Any, memo: dict, new_entry: Callable[[Any, str], list]) -> list[list]:
    """One entry per informer of every component, kept in `memo` between checks: `new_entry(informer,
    component)` builds an informer's entry (a list whose first item is the informer) the first time it is seen,
    and the same entry comes back on every later check, so an invariant keeps its progress through an
    informer's records there. (Entries hold the informer itself, never its id(): a snapshot's copy of the memo
    then still points at the copied informers.)

    Where the informers are changes only when a component crashes or restarts (it builds new ones) or a
    component is added: then only those components' informers are looked up again. Every 256 checks all are, in
    case a component builds informers some other time."""
    loop = cluster.loop
    down = loop.down_components()
    signature = (len(loop.components), tuple(down))
    tick = memo.get("tick", 0)
    memo["tick"] = tick + 1
    flat = memo.get("flat")
    if flat is None or memo.get("signature") != signature or tick % 256 == 0:
        by_component: dict[str, list] = memo.setdefault("by_component", {})
        was_down: set = memo.get("down", set())
        every = flat is None or tick % 256 == 0
        changed = set(down).symmetric_difference(was_down)
        memo["signature"] = signature
        memo["down"] = set(down)
        flat = []
        for name, component in loop.components.items():
            entries = by_component.get(name)
            if every or entries is None or name in changed:
                old = {id(entry[0]): entry for entry in entries or ()}
                entries = []
                for inf in informers_of(component):
                    entry = old.get(id(inf))
                    if entry is None or entry[0] is not inf:
                        entry = new_entry(inf, name)
                    entries.append(entry)
                by_component[name] = entries
            flat.extend(entries)
        memo["flat"] = flat
    return flat


@invariant("informer-no-time-travel", kind=SAFETY, principle="watch, not poll",
           reads=(MODEL_EVENTS,))
def informer_no_time_travel(cluster: Any, memo: dict) -> Iterator[str]:
    """No informer ever exposes to its handlers a resourceVersion older than one it exposed before (within one
    life of its process).

    Reads each informer's `exposed` record from where the last check stopped. Across the lives of a process,
    restart-no-time-travel judges."""
    bad: list = memo.setdefault("bad", [])
    for entry in informer_entries(cluster, memo, lambda inf, name: [inf, 0, 0, name]):
        inf = entry[0]
        exposed = inf.exposed
        if entry[1] == len(exposed):
            continue
        newest = entry[2]
        for rv in exposed[entry[1]:]:
            if rv == 0:
                newest = 0  # the process restarted
            elif rv < newest:
                bad.append(f"{entry[3]}'s {inf.resource} informer exposed resourceVersion {rv} after {newest}")
            else:
                newest = rv
        entry[1], entry[2] = len(exposed), newest
    yield from bad


@invariant("restart-no-time-travel", kind=SAFETY, principle="watch, not poll",
           reads=(MODEL_EVENTS,))
def restart_no_time_travel(cluster: Any, memo: dict) -> Iterator[str]:
    """No restarted process's informer exposes to its handlers a resourceVersion older than what the process knew
    of that resource in an earlier life: the newest resourceVersion its informer of the same resource and
    selectors exposed then, or one of its own writes to that resource came back with.

    A restarted process has forgotten what it saw and did, but what it did stands (pods it stopped, replicas it
    created): acting on an older state than it knew undoes or repeats it (kubernetes/kubernetes#59848: a
    restarted kubelet's first list, asked at resourceVersion 0 and served by a lagging watch cache, reruns a
    pod deleted before the crash; a restarted ReplicaSet controller's does not show the pod it had just
    created, so it creates another). A consistent first list (resourceVersion "") is never older than either:
    it reads the store as it is, and everything the earlier life saw or wrote was in the store before the
    restart. A life is an incarnation of the process (`ApiClient.incarnation`): a crash, or the exit of a
    process that lost its leader election, starts a new one; a process of another name (a standby taking over)
    is not compared. Judged on resourceVersions, as informer-no-time-travel judges one life, from the records
    the component's client keeps across its lives (`ApiClient.informer_lives`, `ApiClient.written_rvs`), so a
    life that began and ended within one step is judged too."""
    bad: list = memo.setdefault("bad", [])
    clients: dict = memo.setdefault("clients", {})
    if _paths.REFERENCE:
        for name, component in cluster.loop.components.items():
            if not declares(component, "client") or not (lives_of := record(record(component, "client"),
                                                                               "informer_lives")):
                continue
            client = record(component, "client")
            for identity, lives in lives_of.items():
                _judge_identity(name, client, identity, lives, _identity_state(clients, name, client, identity), bad)
        yield from bad
        return
    # The same, over a flat list of (component, client, identity, its lives, its state) in the same order, rebuilt
    # when its shape changes: a component comes, holds another client, or its client records an informer identity
    # more (a new life of an identity is appended to the lives list the entry holds). An identity with no new
    # life and no open one has nothing to judge, so only the others are asked.
    components = cluster.loop.components
    shape = [len(components)]  # then (id(client), id(its record), identities recorded) per component with one
    for component in components.values():
        if declares(component, "client") and (lives_of := record(client := record(component, "client"),
                                                                  "informer_lives")):
            shape.append((id(client), id(lives_of), len(lives_of)))  # kept alive in `flat`: ids not reused
    flat = memo.get("flat")
    if flat is None or shape != memo["shape"]:
        flat = memo["flat"] = []
        for name, component in components.items():
            if declares(component, "client") and (lives_of := record(client := record(component, "client"),
                                                                      "informer_lives")):
                for identity, lives in lives_of.items():
                    flat.append((name, client, identity, lives, _identity_state(clients, name, client, identity)))
        memo["shape"] = shape
    for name, client, identity, lives, state in flat:
        if state[0] < len(lives) or state[2]:
            _judge_identity(name, client, identity, lives, state, bad)
    yield from bad


def _identity_state(clients: dict, name: str, client: Any, identity: tuple) -> list:
    """What restart-no-time-travel knows of one informer identity of a component's client: [lives seen, the
    newest resourceVersion of each ended life, the open lives] (a client the component did not hold before
    starts afresh)."""
    entry = clients.get(name)
    if entry is None or entry[0] is not client:
        entry = clients[name] = [client, {}]
    state = entry[1].get(identity)
    if state is None:
        state = entry[1][identity] = [0, [], []]
    return state


def _judge_identity(name: str, client: Any, identity: tuple, lives: list, state: list, bad: list) -> None:
    if state[0] < len(lives):
        _open_new_lives(lives, record(client, "written_rvs").get(identity[0], {}), state)
    if state[2]:
        _judge_open_lives(name, identity, lives, client.incarnation, state[2], bad)


def _life_newest(exposed: list[int], start: int) -> int:
    """The newest resourceVersion of one life's part of an `exposed` record (it ends at a 0, a reset)."""
    newest = 0
    for rv in exposed[start:]:
        if rv == 0:
            break
        newest = max(newest, rv)
    return newest


def _open_new_lives(lives: list, written: dict[int, int], state: list) -> None:
    """Give each life not seen yet its floor, the newest resourceVersion the earlier incarnations knew of (their
    informer lives' exposures, their writes' answers: all final, as those incarnations ended when a later one
    began), and open it for judging when there is one. A floor is (resourceVersion, "exposed" or "written")."""
    seen, newest, opened = state
    for j in range(seen, len(lives)):
        incarnation, _, start = lives[j]
        floor = max(((rv, "written") for life, rv in written.items() if life < incarnation), default=(0, ""))
        for i in range(j):
            if lives[i][0] < incarnation:
                if i >= len(newest):
                    newest.append(_life_newest(lives[i][1], lives[i][2]))
                floor = max(floor, (newest[i], "exposed"))
        if floor[0]:
            opened.append([j, floor, start])
    state[0] = len(lives)


def _judge_open_lives(name: str, identity: tuple, lives: list, incarnation: int, opened: list, bad: list) -> None:
    """Read each open life's new exposures against its floor; a life closes at its first one below it (one
    message per life), or once it ended and all of it was read."""
    for life in list(opened):
        j, (floor, how), pos = life
        life_incarnation, exposed, _ = lives[j]
        ended = life_incarnation < incarnation
        for k in range(pos, len(exposed)):
            rv = exposed[k]
            if rv == 0:
                ended = True
                break
            if rv < floor:
                resource, namespace, labels, fields = identity
                which = ", ".join(x for x in (namespace and f"namespace {namespace}", labels, fields) if x)
                what = ("its informer had exposed" if how == "exposed"
                        else f"one of its writes to {resource} came back with")
                bad.append(f"{name}'s {resource} informer{f' ({which})' if which else ''} exposed resourceVersion "
                           f"{rv} after its process restarted, older than resourceVersion {floor}, which {what} "
                           f"before")
                ended = True
                break
        else:
            life[2] = len(exposed)
        if ended:
            opened.remove(life)


@invariant("watch-delivers-after-start", kind=SAFETY, principle="watch, not poll",
           reads=(MODEL_EVENTS,))
def watch_delivers_after_start(cluster: Any, memo: dict) -> Iterator[str]:
    """No watch delivers to an informer an event at or below the resourceVersion it was started from, or an
    event it already delivered (end to end: etcd, an API server's watch cache, the client).

    A watch from resourceVersion N promises the changes after N, each once, in order (the API's watch
    contract, which a reflector relies on when it resumes from its last resourceVersion). Judged on what each
    informer's watches received before the informer filters anything (`Informer.watch_received`), so a stale
    or repeated event is caught even where the model's informer would drop it."""
    bad: list = memo.setdefault("bad", [])
    for entry in informer_entries(cluster, memo, lambda inf, name: [inf, 0, {}, name]):
        inf = entry[0]
        received = inf.watch_received
        if entry[1] == len(received):
            continue
        streams: dict = entry[2]  # stream -> [start rv, last rv delivered, keys delivered at that rv]
        for delivered in received[entry[1]:]:
            if len(delivered) == 2:
                streams[delivered[0]] = [delivered[1], 0, set()]
                continue
            stream, rv, key = delivered
            state = streams.get(stream)
            if state is None:
                continue
            start, last, keys = state
            where = f"{entry[3]}'s {inf.resource} watch {stream} (from resourceVersion {start})"
            if rv <= start:
                bad.append(f"{where} delivered {key} at resourceVersion {rv}, not after its start")
            elif rv < last or (rv == last and key in keys):
                bad.append(f"{where} delivered {key} at resourceVersion {rv} after resourceVersion {last} "
                           f"(an event again, or out of order)")
            elif rv > last:
                state[1], state[2] = rv, {key}
            else:
                keys.add(key)
        entry[1] = len(received)
        if len(streams) > 64:  # keep only the streams of this life that may still deliver (the newest ones)
            for stream in list(streams)[:-16]:
                del streams[stream]
    yield from bad
