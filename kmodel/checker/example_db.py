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
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Optional
from urllib.parse import urlsplit, urlunsplit

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase, InMemoryExampleDatabase

from kmodel.errors import KmodelUsageError

#: the URL schemes of a Redis database (redis-py's Redis.from_url: TCP, TLS, a Unix socket)
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
#: how long `check_database_spec` waits for Redis to accept the connection before it says it does not answer
REDIS_CONNECT_TIMEOUT_S = 5
#: where a parallel run keeps its failures unless --database says otherwise (relative to the working folder)
DEFAULT_DIRECTORY = ".hypothesis/kmodel"
NONE = "none"


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

        return RedisExampleDatabase(redis.Redis.from_url(spec))
    return DirectoryBasedExampleDatabase(spec)


def campaign_identity(options: Any) -> bytes:
    """What makes a saved failure replayable by another run: the options that change what an example draws or
    runs (not the seed nor the number of examples)."""
    fields = {"variant": options.variant, "fixes": list(options.fixes), "nodes": options.nodes,
              "apiservers": options.apiservers, "controller_managers": options.controller_managers,
              "schedulers": options.schedulers, "profile": options.profile, "steps": options.steps}
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


def campaign_database(spec: Optional[str], options: Any) -> Optional[ExampleDatabase]:
    """The shared database of `spec` under this campaign's keys (a single-process run reads and writes it)."""
    shared = open_database(spec)
    return None if shared is None else CampaignKeys(shared, campaign_identity(options))


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
    view = ReadSharedKeepSaved(shared if shared is not None else InMemoryExampleDatabase())
    if shared is None:
        return None, view
    return CampaignKeys(view, campaign_identity(options)), view


def found_entries(view: ReadSharedKeepSaved) -> dict[bytes, list[bytes]]:
    """The failing examples a worker's Hypothesis saved under its primary keys (the shrunk ones: it deletes each
    as it finds a smaller), in a stable order, to send to the caller."""
    return {key: sorted(values) for key, values in sorted(view.saved.items())
            if values and not key.endswith((b".secondary", b".pareto"))}


def save_found(spec: Optional[str], entries: Iterable[dict[bytes, list[bytes]]]) -> int:
    """Write every worker's saved entries into the shared database; returns how many were written."""
    shared = open_database(spec)
    if shared is None:
        return 0
    written = 0
    for worker in entries:
        for key, values in worker.items():
            for value in values:
                shared.save(key, value)
                written += 1
    return written
