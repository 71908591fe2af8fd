"""The example database a campaign keeps its failures in, so that the next run replays them first.

A single `kmodel check` runs without one unless `--database` names one: what it explores is then a function of
its seed and options alone (the profiles turn Hypothesis' database off). A parallel run (kmodel.checker.parallel)
keeps one by default, the folder DEFAULT_DIRECTORY (Hypothesis' DirectoryBasedExampleDatabase);
``--database redis://HOST:PORT/N`` keeps it in Redis through Hypothesis' own RedisExampleDatabase (the optional
`redis` package: ``pip install 'kmodel[redis]'``), which workers on other machines reach too; ``none`` keeps
none.

Keys: Hypothesis keys a database entry by a digest of the test; every campaign runs the same dynamically
built machine class, so that digest is the same for all of them. `CampaignKeys` puts the campaign's identity
before each key (`campaign_identity`: variant, fixes, cluster, profile and steps, not the seed nor the budget),
so a failure found by one seed is replayed first by any seed of the same campaign, never by another variant's.

Workers read, the caller writes (`shard_database`, `save_found`): each worker reads the shared database as it
was when the run began and keeps what Hypothesis saves in memory; the caller writes those entries once every
worker is done. So no worker replays what another found during the same run (which would make the merged
digest depend on timing), and a worker whose machine cannot reach the caller's folder still sends its
failures home.

A database that fails (Redis going away or timing out, a folder that cannot be written) never ends a run nor
loses its failure: `ForgivingDatabase` sets it aside at its first error, the run goes on as if it kept none,
and the command says what failed and how many failing examples were not saved (the report and its traces are
written as always).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable, Optional
from urllib.parse import urlsplit, urlunsplit

import attrs
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase, InMemoryExampleDatabase

from kmodel.errors import KmodelUsageError

#: the URL schemes of a Redis database (redis-py's Redis.from_url: TCP, TLS, a Unix socket)
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
#: how long `check_database_spec` waits for Redis to accept the connection before it says it does not answer
REDIS_CONNECT_TIMEOUT_S = 5
#: how long a Redis command may wait for its answer before the database is set aside (`ForgivingDatabase`):
#: without it a server that stops answering, but keeps the connection open, would hang the run
REDIS_ANSWER_TIMEOUT_S = 30
#: where a parallel run keeps its failures unless --database says otherwise (relative to the working folder)
DEFAULT_DIRECTORY = ".hypothesis/kmodel"
NONE = "none"
#: the ends of the keys Hypothesis keeps beside a test's failing examples (the larger ones a shrink went
#: through, its Pareto front): not failures to replay
SECONDARY_KEYS = (b".secondary", b".pareto")
#: the key a guided campaign keeps its corpus under (kmodel.checker.guided), beside Hypothesis' own keys (which
#: are digests of the test): one entry per kept example, never a failure to replay
CORPUS_KEY = b"guided-corpus"


def check_database_spec(spec: str) -> str:
    """`spec` if it can be opened here; a usage error naming what is wrong otherwise (Redis without the
    `redis` package or not answering, a folder that is a file)."""
    if spec == NONE:
        return spec
    if spec.startswith(REDIS_SCHEMES):
        try:
            import redis
        except ImportError:
            raise KmodelUsageError(f"--database {shown(spec)}: needs the redis package; install it with "
                                   f"pip install 'kmodel[redis]'") from None
        try:
            redis.Redis.from_url(spec, socket_connect_timeout=REDIS_CONNECT_TIMEOUT_S).ping()
        except (redis.RedisError, ValueError, OSError) as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise KmodelUsageError(f"--database {shown(spec)}: Redis does not answer ({reason}); start it, correct "
                                   f"the URL or name a folder") from None
        return spec
    if Path(spec).exists() and not Path(spec).is_dir():
        raise KmodelUsageError(f"--database {spec}: is a file; name a folder, redis://HOST:PORT/DB or none")
    # Hypothesis' folder database drops a save it cannot write without a word: refuse such a folder up front
    existing = next(p for p in (Path(spec).absolute(), *Path(spec).absolute().parents) if p.exists())
    if not existing.is_dir():
        raise KmodelUsageError(f"--database {spec}: {existing} is a file, so the folder cannot be made; name a "
                               f"folder, redis://HOST:PORT/DB or none")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise KmodelUsageError(f"--database {spec}: {existing} is not writable; name a writable folder, "
                               f"redis://HOST:PORT/DB or none")
    return spec


def shown(spec: str) -> str:
    """`spec` as reports and messages show it: a Redis URL's password replaced by ``***`` (report.json is
    kept and shared; the password is not)."""
    if not spec.startswith(REDIS_SCHEMES):
        return spec
    parts = urlsplit(spec)
    if parts.password is None:
        return spec
    user = parts.username or ""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"  # an IPv6 address, bracketed again as in the URL
    port = f":{parts.port}" if parts.port is not None else ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}{port}"))


def open_database(spec: Optional[str]) -> Optional[ExampleDatabase]:
    """The database `spec` names: None for none, Redis for a redis:// URL, else a folder."""
    if spec is None or spec == NONE:
        return None
    if spec.startswith(REDIS_SCHEMES):
        import redis
        from hypothesis.extra.redis import RedisExampleDatabase

        return RedisExampleDatabase(redis.Redis.from_url(spec, socket_connect_timeout=REDIS_CONNECT_TIMEOUT_S,
                                                         socket_timeout=REDIS_ANSWER_TIMEOUT_S))
    return DirectoryBasedExampleDatabase(spec)


class ForgivingDatabase(ExampleDatabase):
    """`inner`, set aside at its first error: the database only saves a run time (the next run replays what it
    kept first), so a failing one must not end the run, let alone lose the failure the run just found. The
    first error is kept in `error` (one line); from then on every fetch finds nothing without asking `inner`,
    and what Hypothesis saves, deletes and moves is only tracked, so that `unsaved` counts the failing examples
    it would have kept at the end (each shrink saves a smaller one and deletes the one before). redis-py
    retries a failed command a few times, with backoff, before it raises: a short blip of the server is
    absorbed there, not here."""

    def __init__(self, inner: ExampleDatabase) -> None:
        super().__init__()
        self.inner = inner
        self.error: Optional[str] = None
        self._unsaved: set[tuple[bytes, bytes]] = set()

    def __repr__(self) -> str:
        return f"ForgivingDatabase({self.inner!r})"

    @property
    def unsaved(self) -> int:
        """The failing examples not saved (under primary keys, as `found_entries` counts them)."""
        return sum(1 for key, _ in self._unsaved if not key.endswith((*SECONDARY_KEYS, CORPUS_KEY)))

    def _set_aside(self, exc: Exception) -> None:
        if self.error is None:
            self.error = f"{type(exc).__name__}: {' '.join(str(exc).split())}".rstrip(": ")

    def fetch(self, key: bytes) -> Iterable[bytes]:
        if self.error is not None:
            return []
        try:
            return list(self.inner.fetch(key))  # read now: a lazy fetch would fail later, outside this guard
        except Exception as exc:  # any failure of the database's own, whatever its kind: see the class docstring
            self._set_aside(exc)
            return []

    def _tried(self, call: Any, *args: bytes) -> bool:
        """`call(*args)` on `inner` unless it is set aside: True if it went through, False if it is set aside (or
        is now, by this call's error)."""
        if self.error is None:
            try:
                call(*args)
                return True
            except Exception as exc:  # see fetch
                self._set_aside(exc)
        return False

    def save(self, key: bytes, value: bytes) -> None:
        if not self._tried(self.inner.save, key, value):
            self._unsaved.add((key, value))

    def delete(self, key: bytes, value: bytes) -> None:
        if not self._tried(self.inner.delete, key, value):
            self._unsaved.discard((key, value))

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        if not self._tried(self.inner.move, src, dest, value):
            self._unsaved.discard((src, value))
            self._unsaved.add((dest, value))


def set_aside_warning(spec: str, error: str, unsaved: int) -> str:
    """The command's one-line warning for a database set aside during the run (`ForgivingDatabase`)."""
    lost = ("nothing was left unsaved" if not unsaved else
            f"{unsaved} failing example{'s were' if unsaved > 1 else ' was'} not saved, so the next run will not "
            f"replay {'them' if unsaved > 1 else 'it'} first")
    return (f"warning: --database {shown(spec)} failed during the run and was set aside ({error}); the run went on "
            f"without it and {lost}; the report and its traces are complete")


def campaign_identity(options: Any) -> bytes:
    """What makes a saved failure replayable by another run: the options that change what an example draws or
    runs (not the seed nor the number of examples)."""
    fields = {"variant": options.variant, "fixes": list(options.fixes), "nodes": options.nodes,
              "apiservers": options.apiservers, "controller_managers": options.controller_managers,
              "schedulers": options.schedulers, "leader_elect": options.leader_elect, "profile": options.profile,
              "steps": options.steps}
    if options.draws():  # a campaign that draws its topology (kmodel.checker.topology): which counts it draws
        fields["drawn"] = list(options.draws())
    digest = hashlib.blake2b(json.dumps(fields, sort_keys=True).encode(), digest_size=8).hexdigest()
    return f"kmodel:{digest}:".encode()


class CampaignKeys(ExampleDatabase):
    """`inner` with every key prefixed by a campaign's identity (see the module docstring)."""

    def __init__(self, inner: ExampleDatabase, prefix: bytes) -> None:
        super().__init__()
        self.inner, self.prefix = inner, prefix

    def __repr__(self) -> str:
        return f"CampaignKeys({self.inner!r}, {self.prefix!r})"

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self.inner.fetch(self.prefix + key)

    def save(self, key: bytes, value: bytes) -> None:
        self.inner.save(self.prefix + key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        self.inner.delete(self.prefix + key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self.inner.move(self.prefix + src, self.prefix + dest, value)


def campaign_database(spec: Optional[str],
                      options: Any) -> tuple[Optional[ExampleDatabase], Optional[ForgivingDatabase]]:
    """The shared database of `spec` under this campaign's keys (a single-process run reads and writes it), and
    its `ForgivingDatabase` (what failed, what was not saved); None, None if the run keeps no database."""
    shared = open_database(spec)
    if shared is None:
        return None, None
    forgiving = ForgivingDatabase(shared)
    return CampaignKeys(forgiving, campaign_identity(options)), forgiving


class ReadSharedKeepSaved(ExampleDatabase):
    """A worker's view of the shared database: reads come from it as it is, what Hypothesis saves is kept in
    `saved` and never read back. Hypothesis reads back what it saved under its secondary key once a shrink is
    done, replaying every larger failing example it went through (each a failing settle run to its bound: far
    longer than the shrink itself); kept out of sight, those are not replayed, and the run explores what it
    would without a database, after the shared failures it replays first."""

    def __init__(self, shared: ExampleDatabase) -> None:
        super().__init__()
        self.shared = shared
        self.saved: dict[bytes, set[bytes]] = {}

    def __repr__(self) -> str:
        return f"ReadSharedKeepSaved({self.shared!r})"

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self.shared.fetch(key)

    def save(self, key: bytes, value: bytes) -> None:
        self.saved.setdefault(key, set()).add(value)

    def delete(self, key: bytes, value: bytes) -> None:
        self.saved.get(key, set()).discard(value)


def shard_database(spec: Optional[str], options: Any) -> tuple[Optional[ExampleDatabase], ReadSharedKeepSaved]:
    """A worker's database (see `ReadSharedKeepSaved`), under the campaign's keys, and the part that keeps what
    Hypothesis saves (for `found_entries`); None first if the run keeps no database."""
    shared = open_database(spec)
    view = ReadSharedKeepSaved(ForgivingDatabase(shared) if shared is not None else InMemoryExampleDatabase())
    if shared is None:
        return None, view
    return CampaignKeys(view, campaign_identity(options)), view


def found_entries(view: ReadSharedKeepSaved) -> dict[bytes, list[bytes]]:
    """The failing examples a worker's Hypothesis saved under its primary keys (the shrunk ones: it deletes each
    as it finds a smaller), in a stable order, to send to the caller."""
    return {key: sorted(values) for key, values in sorted(view.saved.items())
            if values and not key.endswith(SECONDARY_KEYS)}


def read_error(view: ReadSharedKeepSaved) -> Optional[str]:
    """The error that set a worker's shared database aside while it read it (None: none)."""
    shared = view.shared
    return shared.error if isinstance(shared, ForgivingDatabase) else None


@attrs.frozen
class Saved:
    """What `save_found` wrote: entries written, entries not written, and the error that stopped it (if any)."""

    written: int = 0
    unsaved: int = 0
    error: Optional[str] = None


def save_found(spec: Optional[str], entries: Iterable[dict[bytes, list[bytes]]]) -> Saved:
    """Write every worker's saved entries into the shared database (a failing one is set aside, see
    `ForgivingDatabase`: what it could not take is counted, never raised)."""
    shared = open_database(spec)
    if shared is None:
        return Saved()
    forgiving = ForgivingDatabase(shared)
    written = unsaved = 0
    for worker in entries:
        for key, values in worker.items():
            for value in values:
                forgiving.save(key, value)
            # read back: Hypothesis' folder database drops a save it cannot write (a full disk) without a word
            kept = sum(1 for value in set(forgiving.fetch(key)) if value in values)
            written += kept
            unsaved += len(values) - kept
    error = forgiving.error
    if error is None and unsaved:
        error = f"it did not keep {unsaved} of the {written + unsaved} entries written"
    return Saved(written, unsaved, error)


def saved_failures(spec: Optional[str], options: Any) -> int:
    """How many failing examples of this campaign (`campaign_identity`) the database holds: what a run replays
    before it explores, so the command can say so first (a run that replays them explores something else than
    its seed alone gives). Counted from the keys the database lists: a folder's own index of its keys
    (Hypothesis' metakeys entry), or a Redis SCAN; 0 when there is no database or it cannot be read (the run
    itself then sets it aside, see `ForgivingDatabase`)."""
    db = open_database(spec)
    if db is None:
        return 0
    prefix = campaign_identity(options)
    try:
        if isinstance(db, DirectoryBasedExampleDatabase):
            keys = [key for key in db.fetch(db._metakeys_name) if key.startswith(prefix)]
        else:  # RedisExampleDatabase: its keys are its own prefix + ours
            own = db._prefix + prefix
            keys = [key[len(db._prefix):] for key in db.redis.scan_iter(match=own + b"*")]
        return sum(len(list(db.fetch(key))) for key in keys if not key.endswith((*SECONDARY_KEYS, CORPUS_KEY)))
    except Exception:  # noqa: BLE001 - a database that cannot be read here is reported by the run itself
        return 0


def load_corpus(db: Optional[ExampleDatabase]) -> list[bytes]:
    """The guided corpus `db` holds (a campaign's database: `campaign_database`), each entry once, sorted, so
    the order a run draws from does not depend on how the database lists them; none without a database."""
    return [] if db is None else sorted(set(db.fetch(CORPUS_KEY)))


def save_corpus(db: Optional[ExampleDatabase], entries: Iterable[bytes]) -> None:
    """Add guided corpus entries to `db` (nothing without one; a failing database is a ForgivingDatabase's
    to set aside)."""
    if db is not None:
        for entry in entries:
            db.save(CORPUS_KEY, entry)
