"""The checker's reach, measured by mutation: which planted mistakes in the model does `kmodel check` catch,
beside the unit tests of the mistaken package?

    python benchmarks/mutation.py --sample 40 --seed 1 [--jobs J] [--packages store,ipam] [--json PATH]

Line coverage says little here: a seed-1 check runs most of the model's lines, with inputs that often cannot
tell right from wrong. So this plants mistakes (benchmarks/mutator.py: flipped comparisons and booleans,
constants off by one, dropped statements, swapped arguments, early returns) in the model packages, one mutant
at a time, and runs against each

    (a) the unit tests of its package:  python -m pytest -q -x -p no:cacheprovider tests/<package>
    (b) the checker:                    kmodel check <checker args>    (default: --fix all --seed 1)

A mutant is killed by (a) when a test fails, errors or times out; by (b) when the check reports a violation.
The checker's kills are told apart: by an invariant (a violated guarantee), by a crash (the model raised:
the `model-error` pseudo-invariant, or kmodel itself failed) or by a timeout. A mutant no line of which the
pristine check executes (a coverage pass, when coverage.py is installed: the `bench` extra) cannot be killed
by the checker and is marked "not reached" without running it.

Hypothesis' shrinking and kmodel's minimization are turned off in (b): they change which trace is reported,
never whether one is, and shrinking a violation can take minutes.

How the runs are kept apart: the repository is copied once per job to a temporary folder; a mutant is written
into its copy, run, and the original written back. Every run imports kmodel from that copy (PYTHONPATH, and a
check at start that `kmodel` and `kmodel.invariants` resolve there, not to the editable install). The mutated file's
cached bytecode is removed before and after, since a mutant of the same size written within the same second
would otherwise pass for the original.

The sample: every mutation point of the chosen packages, in a stable order, shuffled with random.Random(seed),
and the first N that parse and change the tree, so the same seed on the same code runs the same mutants. The
output lists, per package, the mutants, those the unit tests kill, those the checker kills (how), and the
checker's score among the mutants the unit tests kill; then each survivor the unit tests kill and the checker
does not: a gap in the checker's reach or in its invariants, unless EXCLUSIONS explains it (below).
docs/mutation.md says how to read it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import queue
import random
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mutator  # noqa: E402
from mutator import Mutant  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

#: the model packages (kmodel/<name>), each with its unit tests in tests/<name>
MODEL_PACKAGES: tuple[str, ...] = ("store", "apiserver", "client", "controllers", "scheduler", "kubelet", "proxy",
                                   "ipam", "network", "loop")

DEFAULT_CHECKER_ARGS = "--fix all --seed 1"

#: why the kubelet's probe mutants that skip the pod's immediate sync are only slower
PROBE_SYNC_BY_RESYNC = ("a probe's changed result no longer queues its pod's sync at once: the pod worker's "
                        "periodic resync (syncFrequency, 60 s) picks it up, so readiness and a liveness restart are "
                        "reported up to a minute later, with the same outcome; no guarantee bounds that delay")

#: Survivors the unit tests kill and the checker does not, explained: mutant id -> why the checker cannot or
#: need not kill it (an equivalent change under the checker's cluster, a path only a unit test can reach, ...).
#: A mutant listed here is still run and counted; the report shows it apart from the unexplained gaps.
EXCLUSIONS: dict[str, str] = {
    # kmodel/store/store.py, Store._fan_out: `for kv in write.changes:` dropped
    "bf3c237675": "the path of a write that changes several keys (a txn of several puts, a ranged delete); "
                  "the API server changes one key per write (as upstream's etcd3 storage does for create, "
                  "update and delete), so no cluster the checker builds makes one; the store's unit tests and "
                  "the etcd conformance tests cover it",
    # kmodel/loop/loop.py, Loop._record: `self.events_applied += 1` made `+= 2`
    "fde13a9b2c": "a count of the loop's own events, read only by the checker's budgets (a settle's for a "
                  "cluster that keeps busy, the shrink's) and its figures: not state of the cluster, so no "
                  "invariant can judge it; the loop's unit tests count it exactly",
    # kmodel/apiserver/etcd_endpoint.py, EtcdServer.reachable_from: `not down and can_reach` made `or`
    "e9d8c77723": "etcd's faults stop biting: a replica cut off from etcd, or an etcd that is down, still has "
                  "its calls answered. The cluster then runs as a healthy one, which every guarantee rightly "
                  "accepts; that a fault takes effect is the fault's own business (tests/apiserver)",
    # kmodel/apiserver/etcd_endpoint.py, EtcdServer.reachable_from: `can_reach(replica, etcd)` arguments swapped
    "2b4c73ca9e": "equivalent: reachability is symmetric (kmodel.network.reachability joins sides with an "
                  "undirected graph), so can_reach(a, b) == can_reach(b, a)",
    # kmodel/apiserver/etcd_endpoint.py, EtcdHandle.watch: `self._call()` dropped
    "3297c4bb98": "a watch opened while etcd is unreachable is opened anyway instead of failing: its stream "
                  "carries nothing across the partition and delivers after the heal, as the retried watch "
                  "would; the fault stops biting, no guarantee changes (see e9d8c77723)",
    # kmodel/apiserver/replica.py: ETCD_CLIENT_KEEPALIVE idle 30_000 ms made 30_001
    "31ce0e033a": "the etcd client's keepalive ping a millisecond later: a timing difference no guarantee "
                  "depends on",
    # kmodel/apiserver/pipeline.py, Pipeline._update: `new = run_mutating(a)` dropped
    "dc350516c8": "on an update the mutating chain changes or refuses only a kubelet writing what is not its own "
                  "(NodeRestriction; the toleration defaults and namespace lifecycle act on creates): the "
                  "model's kubelets never do, and the checker's users are not nodes, so no update it makes is "
                  "changed by the chain",
    # kmodel/apiserver/etcd_log.py, EtcdLog.record: `return None` first
    "032431d835": "the log is the watch invariants' record of what a replica's etcd watch received, kept beside "
                  "the replica's state, not part of it: emptied, the watch guarantees have nothing to judge, "
                  "while the watch cache, fed by the same responses, is unchanged",
    # kmodel/controllers/replicaset_logic.py, slow_start_batch: `errors = 0` made `= 1`
    "987f72fd2e": "slow_start_batch is the pure reference of upstream's slowStartBatch, called only by the unit "
                  "tests; the ReplicaSet controller runs its batches asynchronously (ReplicaSetController._create)",
    # kmodel/apiserver/events.py, human_duration: three mutants of kubectl's HumanDuration
    "2684ddaac1": "kubectl's HumanDuration of an Event's age, printed by format_events (the report's `kubectl get "
                  "events`): text, which no component and no guarantee reads",
    "3bedafbe71": "kubectl's HumanDuration of an Event's age (see 2684ddaac1): text no guarantee reads",
    "1fdda9f97c": "kubectl's HumanDuration of an Event's age (see 2684ddaac1): text no guarantee reads",
    # kmodel/loop/loop.py, Loop.why_not_enabled / _why_not_fail_request: a message dropped
    "7ad87dd8eb": "the reason the loop gives for refusing an event on replay (a diagnostic's text): a replay of "
                  "a trace the checker wrote never asks",
    "bcc72d3e09": "the reason the loop gives for refusing a request fault on replay (a diagnostic's text): the "
                  "checker draws only faults the loop accepts",
    # kmodel/loop/loop.py, Loop.enabled_faults: `faults.append(Restart(name))` dropped
    "46f0a5f432": "the loop's menu of parameterless faults, for an explorer that drives the loop by hand; the "
                  "checker's fault rules list their own candidates (KmodelMachine.FAULT_CANDIDATES)",
    # kmodel/store/store.py, Store.request_progress: `w.pending.append(response)` dropped
    "5426285a43": "etcd's RequestProgress API, which no component of the model calls (the API servers' watch "
                  "relies on progress_notify); the store's unit tests and the etcd conformance tests cover it",
    # kmodel/store/store.py, Store.take_watch_responses: the refused watches' queue
    "3543ef6bf5": "etcd refuses a watch only of an empty key range; the API servers watch /registry/ whole, so "
                  "no watch of the checker's clusters is ever refused",
    # kmodel/store/store.py, Store._range: `more = True` dropped
    "d0eb348978": "a range with a limit (pagination): no component of the model reads etcd with a limit",
    # kmodel/scheduler/schedule_one.py, num_feasible_nodes_to_find: the percentage's floor dropped
    "e541f7938d": "upstream's percentageOfNodesToScore, which applies from 100 nodes on: a cluster of fewer "
                  "nodes (every cluster the checker builds) scores them all before this line",
    # kmodel/scheduler/queue.py, SchedulingQueue.active: the view dropped
    "5c90fad00d": "a view of activeQ's keys for the unit tests; the scheduler pops from the heap itself",
    # kmodel/apiserver/watchcache.py, ResourceCache._resize: the "grow while the oldest event is fresh" branch
    "85700fb84e": "the watch cache's window no longer grows under a burst of fresh events, so more watches start "
                  "before its oldest event and get 410 Gone: they relist, which is how every client recovers "
                  "and which every guarantee allows; a cost, not a different outcome",
    # kmodel/kubelet/component.py, Kubelet._probe: the pod's sync after a changed probe result, not queued
    "0c1473cabb": PROBE_SYNC_BY_RESYNC,  # `self._enqueue(POD, key[0])` dropped
    "a6dee17dbf": PROBE_SYNC_BY_RESYNC,  # `if changed and key[0] in self.workers:` dropped
    "531fa97218": PROBE_SYNC_BY_RESYNC,  # `key[0] in self.workers` made `not in`
    "df569b3279": PROBE_SYNC_BY_RESYNC,  # the pod's uid made key[-1] (the probe kind, no pod)
    "19bf92d2f0": PROBE_SYNC_BY_RESYNC,  # the pod's uid made key[1] (the container's name, no pod)
    # kmodel/client/workqueue.py: BASE_DELAY_MS = 5 made 4
    "b710c4c1db": "the work queue's first backoff a millisecond shorter (client-go's 5 ms base): a timing "
                  "difference no guarantee depends on",
    # kmodel/client/api_client.py, ApiClient._fail_requests_on: `self._failed(peer)` dropped
    "50cf435407": "the client does not mark a reset peer failed, so its next request goes there again and fails "
                  "over one timeout later: a slower failover, the same outcome",
    # kmodel/client/api_client.py, ApiClient._fail_requests_on: `id not in answered` made `in`
    "394de34c13": "the requests a reset connection leaves unanswered are failed by the client's own request "
                  "timeout (60 s) instead of at once: the same error (a write that may have been applied), later",
    # kmodel/client/api_client.py, ApiClient.on_connection_reset: `peer, answered` arguments swapped
    "cdf57e30c4": "no request is failed on a reset (the peer compared with a set never matches): each is failed "
                  "by the client's request timeout instead, later, with the same meaning (see 394de34c13)",
    # kmodel/client/api_client.py, ApiClient._fail_requests_on: `endpoint == peer and ...` made `or`
    "d18221d47c": "a reset also fails the client's requests out to other replicas: each such failure is one the "
                  "client must survive anyway (a lost connection, whose write may have been applied), and its "
                  "late answer is ignored; only extra retries show",
    # kmodel/controllers/deployment.py, get_condition: `c.type == type_` made `!=`
    "c6ae7c79d5": "the Progressing condition is still rewritten by every rollout status sync (setCondition "
                  "replaces by type); what changes is when a stalled rollout would be declared "
                  "ProgressDeadlineExceeded (600 s of no progress, past a dev run's horizon) and a "
                  "FoundNewReplicaSet reason the next status sync overwrites: timing of a status condition, "
                  "which no guarantee of the cluster depends on",
    # kmodel/scheduler/plugins/tainttoleration.py, score: each untolerated PreferNoSchedule taint counts 0, not 1
    "a41b6ccf38": "PreferNoSchedule is a soft preference, one weighted score among the default plugins': no "
                  "guarantee says where a pod that tolerates every NoSchedule taint lands, so no invariant can "
                  "judge a placement that prefers another node (the scheduler's unit tests judge the score)",
    # kmodel/scheduler/plugins/noderesources.py, fits_request: InsufficientResource(name, reason) arguments swapped
    "a37b705564": "the path of an extended (scalar) resource no node has enough of: the checker's nodes advertise "
                  "no extended resources, and the swap changes only the FailedScheduling message's wording",
    # kmodel/client/informer.py: the reflector's backoff reset after a quiet spell dropped
    "83b256fbb4": "a reflector whose backoff is not reset after two quiet minutes waits longer (up to 30 s) "
                  "before its next relist: slower, with the same outcome; no guarantee bounds that delay",
    # kmodel/controllers/replicaset.py, _create: `nxt > 0` made `nxt >= 0` after the last slow-start batch
    "1dc86305b1": "after the last creation batch an empty batch is started, which never completes, so that sync "
                  "writes no status; the new pods' own updates (scheduled, Running, Ready) sync the ReplicaSet "
                  "again at once and write it, so the status converges the same",
    # kmodel/client/workqueue.py, the delaying queue's timer: a key's due time compared through the wrong field
    "a187458b70": "delayed keys (rate-limited retries, AddAfter) become ready at the queue's next timer instead "
                  "of at their due time: controllers retry sooner, with the same outcome; no guarantee bounds a "
                  "retry's delay from below",
    # kmodel/store/store.py, the single-put txn fast path's guard: `and` made `or`
    "b04fa85f81": "the fast path declines a txn it could take and the reference path runs it: the same result "
                  "and history, only slower (the fast path is checked against the reference in tests/store)",
    # kmodel/scheduler/preemption.py, _fit_error_text: the loop counting each node's reasons dropped
    "ffafe80e53": "changes only the text of the FailedScheduling message after a failed preemption (its counts "
                  "of reasons per node); no guarantee reads a scheduler message",
    # kmodel/client/api_client.py, _record_update: two fields of the UpdateRecord swapped
    "d97a1cf96b": "an observer's record, read only by occ-no-lost-update: with two of its fields swapped the "
                  "check is weaker, and a correct model gives it nothing to find either way (its own tests in "
                  "tests/invariants hold and fail it)",
}

#: what is copied into each job's folder: the repository without its history, environments and outputs
COPY_IGNORE = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", ".pytest_cache", ".hypothesis",
                                     "reports", "build", "dist", ".coverage*")

#: runs the check with shrinking and minimization off (see the module docstring); arguments as `kmodel check`'s
CHECK_DRIVER = '''\
import sys
from hypothesis import Phase, settings
from kmodel.checker import profiles, run
for _name, _settings in list(profiles._SETTINGS.items()):
    profiles._SETTINGS[_name] = settings(_settings, phases=tuple(p for p in _settings.phases if p is not Phase.shrink))
from kmodel.checker.minimize import Minimized
run.minimize_trace = lambda trace, **kwargs: Minimized(trace, len(trace.actions), 0, 0)
from kmodel.cli import main
from kmodel.runtime import tune_gc
tune_gc()
sys.exit(main(["check", *sys.argv[1:]]))
'''
DRIVER_NAME = ".mutation_check.py"
#: how much slower the check runs under coverage.py (its line tracer), to derive a mutant run's timeout
COVERAGE_SLOWDOWN = 3.0
REPORT_DIR = ".mutation-report"


@dataclass
class Outcome:
    """One run against one mutant. kind: for the unit tests survived | failed | error | timeout; for the
    checker survived | invariant | crash | timeout | unreached (--require-reached: a situation the pristine check
    reaches was not) | not-reached | not-run (--checker-only-unit-killed)."""

    kind: str
    detail: str = ""
    seconds: float = 0.0

    @property
    def killed(self) -> bool:
        return self.kind not in ("survived", "not-reached", "not-run")


@dataclass
class Result:
    mutant: Mutant
    before: str
    after: str
    unit: Outcome
    checker: Outcome
    excluded: Optional[str] = None  # the reason, when EXCLUSIONS explains a survivor

    def to_json(self) -> dict:
        return {**asdict(self.mutant), "package": self.mutant.package, "before": self.before, "after": self.after,
                "unit": asdict(self.unit), "checker": asdict(self.checker), "excluded": self.excluded}


class UsageError(Exception):
    """Input the script cannot use: one line on stderr, exit 2."""


# -- the sample -------------------------------------------------------------------------------------------------

def model_files(root: Path, packages: tuple[str, ...]) -> list[Path]:
    return sorted(p for name in packages for p in (root / "kmodel" / name).rglob("*.py"))


def all_mutants(root: Path, packages: tuple[str, ...]) -> tuple[list[Mutant], dict[str, str]]:
    """Every mutation point of the packages, in a stable order, and each file's text by relative path."""
    mutants: list[Mutant] = []
    texts: dict[str, str] = {}
    for path in model_files(root, packages):
        rel = path.relative_to(root).as_posix()
        texts[rel] = path.read_text(encoding="utf-8")
        mutants.extend(mutator.mutation_points(rel, texts[rel]))
    mutants.sort(key=Mutant.sort_key)
    return mutants, texts


def sample(mutants: list[Mutant], texts: dict[str, str], n: int, seed: int) -> list[Mutant]:
    """The first `n` valid mutants of the population shuffled by `seed`, in the shuffled order (the order they
    are run in: so the first k done of a run are exactly `--sample k`'s mutants, and a run stopped part way is
    still a uniform sample)."""
    order = list(range(len(mutants)))
    random.Random(seed).shuffle(order)
    chosen: list[int] = []
    for i in order:
        if len(chosen) == n:
            break
        if mutator.check(mutants[i], texts[mutants[i].path]) is None:
            chosen.append(i)
    return [mutants[i] for i in chosen]


def in_file_order(items: list, key=lambda m: m) -> list:
    """Mutants (or results, through `key`) in the order of their files and lines, for reading."""
    return sorted(items, key=lambda x: (key(x).path, key(x).line, key(x).ident))


def tree_digest(root: Path) -> str:
    """A digest of what a mutant's runs depend on: the model, the invariants and the unit tests. A run's results
    can be resumed only on the same tree."""
    import hashlib

    digest = hashlib.sha256()
    for folder in ("kmodel", "invariants", "tests"):
        for path in sorted((root / folder).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


# -- running ----------------------------------------------------------------------------------------------------

def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class Workspace:
    """A copy of the repository where mutants are run one at a time."""

    def __init__(self, root: Path, python: str) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="kmodel-mutation-"))
        self.python = python
        shutil.copytree(root, self.dir, ignore=COPY_IGNORE, dirs_exist_ok=True)
        # kmodel.invariants is the folder invariants/ (pyproject.toml's package-dir), which an editable install
        # maps to the original's folder: a link lays it out in the copy as an installed package is laid out
        (self.dir / "kmodel" / "invariants").symlink_to(Path("..") / "invariants", target_is_directory=True)
        (self.dir / DRIVER_NAME).write_text(CHECK_DRIVER, encoding="utf-8")
        self.env = {**os.environ, "PYTHONPATH": str(self.dir), "PYTHONHASHSEED": "0"}
        self.env.pop("KMODEL_TRACEBACK", None)
        self._verify_imports()

    def _verify_imports(self) -> None:
        out = self.run([self.python, "-c", "import kmodel, kmodel.invariants as i; print(kmodel.__file__); "
                                           "print(i.__file__)"], 120)
        where = out.stdout.split()
        if out.returncode != 0 or len(where) != 2 or not all(Path(w).is_relative_to(self.dir) for w in where):
            raise UsageError(f"the copy in {self.dir} does not import its own kmodel ({out.stdout.strip()} "
                             f"{out.stderr.strip()[-200:]}); run with the worktree's venv python")

    def run(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess:
        """Run `argv` in the copy; on timeout its whole process group is killed and returncode is None."""
        proc = subprocess.Popen(argv, cwd=self.dir, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
            return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            stdout, stderr = proc.communicate()
            return subprocess.CompletedProcess(argv, None, stdout, stderr)
        except BaseException:
            _kill_group(proc)
            raise

    def _forget_bytecode(self, rel: str) -> None:
        Path(importlib.util.cache_from_source(str(self.dir / rel))).unlink(missing_ok=True)

    def write(self, rel: str, text: str) -> None:
        (self.dir / rel).write_text(text, encoding="utf-8")
        self._forget_bytecode(rel)

    def unit_tests(self, package: str, timeout: float) -> Outcome:
        shutil.rmtree(self.dir / ".hypothesis", ignore_errors=True)  # no example database carried between mutants
        started = time.perf_counter()
        out = self.run([self.python, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--hypothesis-seed=0",
                        f"tests/{package}"], timeout)
        seconds = round(time.perf_counter() - started, 1)
        if out.returncode is None:
            return Outcome("timeout", f"over {timeout:.0f} s", seconds)
        if out.returncode == 0:
            return Outcome("survived", "", seconds)
        lines = [line for line in out.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
        kind = "failed" if out.returncode == 1 else "error"
        detail = lines[0] if lines else (out.stdout.strip().splitlines() or [f"exit {out.returncode}"])[-1]
        return Outcome(kind, detail[:200], seconds)

    def checker(self, args: list[str], timeout: float, *, coverage_file: Optional[Path] = None) -> Outcome:
        report = self.dir / REPORT_DIR
        shutil.rmtree(report, ignore_errors=True)
        prefix = [self.python]
        if coverage_file is not None:
            prefix += ["-m", "coverage", "run", f"--data-file={coverage_file}", f"--source={self.dir / 'kmodel'}"]
        started = time.perf_counter()
        out = self.run(prefix + [DRIVER_NAME, *args, "--report", str(report)], timeout)
        seconds = round(time.perf_counter() - started, 1)
        if out.returncode is None:
            return Outcome("timeout", f"over {timeout:.0f} s", seconds)
        if out.returncode == 0:
            return Outcome("survived", "", seconds)
        if out.returncode == 1:
            try:
                written = json.loads((report / "report.json").read_text())
                unreached = (written.get("required_sometimes") or {}).get("unreached") or []
                if not written["violations"] and unreached:
                    return Outcome("unreached", f"never reached: {', '.join(unreached)}"[:200], seconds)
                first = written["violations"][0]
            except (OSError, ValueError, KeyError, IndexError):
                return Outcome("crash", f"exit 1 without a readable report: {out.stderr.strip()[-200:]}", seconds)
            name = first["invariant"]
            kind = "crash" if name == "model-error" else "invariant"
            return Outcome(kind, f"{name}: {first['message']}"[:200], seconds)
        tail = (out.stderr.strip().splitlines() or [""])[-1]
        return Outcome("crash", f"exit {out.returncode}: {tail}"[:200], seconds)

    def situations_reached(self) -> list[str]:
        """The sometimes properties the last check's report says some example reached."""
        try:
            written = json.loads((self.dir / REPORT_DIR / "report.json").read_text())
        except (OSError, ValueError):
            return []
        return [entry["name"] for entry in written.get("sometimes", []) if entry.get("examples")]

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


@dataclass
class Baseline:
    """The pristine copy's runs: every unit test package passes, the check passes, and (with coverage.py)
    the lines the check executes."""

    unit_seconds: dict[str, float] = field(default_factory=dict)
    checker_seconds: float = 0.0
    reached: Optional[dict[str, set[int]]] = None  # relative path -> executed lines; None: not measured
    #: the sometimes properties the pristine check reaches (its report's), for --require-reached
    situations: list[str] = field(default_factory=list)


def reach_cache(root: Path, checker_args: list[str]) -> Path:
    """Where the pristine check's executed lines are kept between runs: named by a digest of the model's and
    the invariants' sources, the checker's arguments and Hypothesis' version, so any change measures anew."""
    import hashlib

    from hypothesis import __version__ as hypothesis_version

    digest = hashlib.sha256(repr((checker_args, hypothesis_version)).encode())
    for path in sorted((root / "kmodel").rglob("*.py")) + sorted((root / "invariants").rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return Path(tempfile.gettempdir()) / f"kmodel-mutation-reach-{digest.hexdigest()[:16]}.json"


def baseline(ws: Workspace, root: Path, packages: tuple[str, ...], checker_args: list[str],
             use_coverage: bool) -> Baseline:
    base = Baseline()
    for package in packages:
        outcome = ws.unit_tests(package, 1800)
        if outcome.kind != "survived":
            raise UsageError(f"the unit tests of {package} fail without a mutant ({outcome.detail}); fix them first")
        base.unit_seconds[package] = outcome.seconds
    cache = reach_cache(root, checker_args) if use_coverage else None
    kept = json.loads(cache.read_text()) if cache is not None and cache.exists() else {}
    if "situations" in kept:
        base.checker_seconds = kept["seconds"]
        base.reached = {path: set(lines) for path, lines in kept["reached"].items()}
        base.situations = kept["situations"]
        return base
    coverage_file = ws.dir / ".coverage-reach" if use_coverage else None
    outcome = ws.checker(checker_args, 3600, coverage_file=coverage_file)
    if outcome.kind != "survived":
        raise UsageError(f"`kmodel check {' '.join(checker_args)}` fails without a mutant ({outcome.kind}: "
                         f"{outcome.detail}); pick checker arguments that pass")
    # under coverage the check runs several times slower than it will against a mutant
    base.checker_seconds = outcome.seconds / (COVERAGE_SLOWDOWN if use_coverage else 1)
    base.situations = ws.situations_reached()
    if coverage_file is not None and cache is not None:
        import coverage

        data = coverage.CoverageData(basename=str(coverage_file))
        data.read()
        base.reached = {Path(f).relative_to(ws.dir).as_posix(): set(data.lines(f) or ())
                        for f in data.measured_files()}
        cache.write_text(json.dumps({"seconds": base.checker_seconds, "situations": base.situations,
                                     "reached": {p: sorted(v) for p, v in sorted(base.reached.items())}}))
    return base


def require_args(base: Baseline, require_reached: bool) -> list[str]:
    """With --require-reached, the checker must reach every situation the pristine check reaches: a mutant
    that makes a fault stop biting passes every invariant (a healthy cluster does) but not that."""
    return ["--require-sometimes", ",".join(base.situations)] if require_reached and base.situations else []


def reached(mutant: Mutant, base: Baseline) -> bool:
    if base.reached is None:
        return True
    lines = base.reached.get(mutant.path, set())
    return any(line in lines for line in range(mutant.line, mutant.end_line + 1))


def run_mutant(ws: Workspace, mutant: Mutant, text: str, base: Baseline, checker_args: list[str],
               unit_timeout: Optional[float], checker_timeout: Optional[float],
               checker_only_unit_killed: bool = False, require_reached: bool = False) -> Result:
    before, after = mutator.changed_lines(mutant, text)
    ws.write(mutant.path, mutator.apply(mutant, text))
    try:
        unit = ws.unit_tests(mutant.package,
                             unit_timeout or max(60.0, 4 * base.unit_seconds.get(mutant.package, 15.0)))
        if checker_only_unit_killed and not unit.killed:
            checker = Outcome("not-run", "the unit tests do not kill it (--checker-only-unit-killed)")
        elif reached(mutant, base):
            checker = ws.checker(checker_args + require_args(base, require_reached),
                                 checker_timeout or max(300.0, 6 * base.checker_seconds))
        else:
            checker = Outcome("not-reached", "no line of it runs in the pristine check")
    finally:
        ws.write(mutant.path, text)
    return Result(mutant, before, after, unit, checker)


# -- the report -------------------------------------------------------------------------------------------------

def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "-"


def table(results: list[Result], packages: tuple[str, ...]) -> list[str]:
    head = ("package", "mutants", "unit", "checker", "invariant", "crash", "timeout", "unreached", "not reached", "both",
            "checker/unit", "checker only")
    rows = []
    for name in list(packages) + ["all"]:
        rs = [r for r in results if name == "all" or r.mutant.package == name]
        if not rs:
            continue
        unit = [r for r in rs if r.unit.killed]
        both = [r for r in unit if r.checker.killed]
        rows.append((name, len(rs), len(unit), sum(r.checker.killed for r in rs),
                     sum(r.checker.kind == "invariant" for r in rs),
                     sum(r.checker.kind == "crash" for r in rs), sum(r.checker.kind == "timeout" for r in rs),
                     sum(r.checker.kind == "unreached" for r in rs),
                     sum(r.checker.kind == "not-reached" for r in rs), len(both),
                     f"{len(both)}/{len(unit)} {percent(len(both), len(unit))}",
                     sum(r.checker.killed and not r.unit.killed for r in rs)))
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    fmt = lambda row: "  ".join(str(x).rjust(w) if i else str(x).ljust(w)  # noqa: E731
                                for i, (x, w) in enumerate(zip(row, widths)))
    return [fmt(head)] + [fmt(r) for r in rows]


def report(results: list[Result], packages: tuple[str, ...], checker_args: list[str]) -> list[str]:
    out = [f"mutants per package: killed by the unit tests (unit), by `kmodel check {' '.join(checker_args)}` "
           f"(checker: by an invariant, a crash, a timeout or, with --require-reached, a situation no longer "
           f"reached), by both, and the checker's score among the unit "
           f"tests' kills", ""]
    results = in_file_order(results, key=lambda r: r.mutant)
    out += table(results, packages)
    unit = [r for r in results if r.unit.killed]
    gaps = [r for r in unit if not r.checker.killed]
    explained = [r for r in gaps if r.excluded]
    caught = len(unit) - len(gaps)
    out += ["", f"the checker kills {caught} of the {len(unit)} mutants the unit tests kill "
                f"({percent(caught, len(unit))}); with the {len(explained)} explained survivors set aside: "
                f"{caught}/{len(unit) - len(explained)} ({percent(caught, len(unit) - len(explained))})"]
    survivors = [r for r in results if not r.unit.killed and not r.checker.killed]
    not_run = sum(r.checker.kind == "not-run" for r in results)
    out.append(f"survived both: {len(survivors)}; killed by the checker only: "
               f"{sum(r.checker.killed and not r.unit.killed for r in results)}"
               + (f" (the checker was not run on the {not_run} mutants the unit tests do not kill)" if not_run else ""))
    for title, chosen in (("survivors the unit tests kill and the checker does not (gaps)",
                           [r for r in gaps if not r.excluded]),
                          ("explained survivors (EXCLUSIONS)", explained)):
        out += ["", f"{title}: {len(chosen)}"]
        for package in packages:
            rs = [r for r in chosen if r.mutant.package == package]
            if not rs:
                continue
            out.append(f"  {package}")
            for r in rs:
                m = r.mutant
                why = f" [{r.checker.kind}]" if r.checker.kind == "not-reached" else ""
                out.append(f"    {m.ident}  {m.location()}  {m.operator}  in {m.scope or '<module>'}{why}")
                out.append(f"        - {r.before}")
                out.append(f"        + {r.after}")
                out.append(f"        unit tests: {r.unit.kind}: {r.unit.detail}")
                if r.excluded:
                    out.append(f"        why: {r.excluded}")
    return out


# -- the command ------------------------------------------------------------------------------------------------

def read_exclusions(path: Optional[str]) -> dict[str, str]:
    table = dict(EXCLUSIONS)
    if path is None:
        return table
    try:
        extra = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--exclusions {path}: not a readable JSON file ({exc}); give a JSON object "
                         f"mapping mutant ids to reasons") from None
    if not isinstance(extra, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                              for k, v in extra.items()):
        raise UsageError(f"--exclusions {path}: give a JSON object mapping each mutant id to a non-empty reason")
    table.update(extra)
    return table


def results_from_json(path: str) -> tuple[dict, list[Result]]:
    try:
        run = json.loads(Path(path).read_text(encoding="utf-8"))
        results = []
        for r in run["results"]:
            fields = {k: r[k] for k in Mutant.__dataclass_fields__}
            results.append(Result(Mutant(**fields), r["before"], r["after"], Outcome(**r["unit"]),
                                  Outcome(**r["checker"])))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path}: not a --json file of this script ({exc}); give the file a run wrote with --json") from None
    return run, results


def apply_exclusions(results: list[Result], exclusions: dict[str, str]) -> None:
    for r in results:
        r.excluded = exclusions.get(r.mutant.ident) if r.unit.killed and not r.checker.killed else None


def reprint(path: str, exclusions: dict[str, str]) -> int:
    run, results = results_from_json(path)
    apply_exclusions(results, exclusions)
    print(f"{len(results)} of {run['population']} mutation points, seed {run['seed']} (from {path})")
    print("\n".join(report(results, tuple(run["packages"]), run["checker_args"])))
    return 0


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="the checker's reach beside the unit tests', by mutation",
                                epilog="exit codes: 0 the run finished; 2 bad usage or a baseline that fails")
    p.add_argument("--sample", type=int, default=40, metavar="N", help="mutants to run (default 40)")
    p.add_argument("--seed", type=int, default=1, metavar="S", help="the sample's seed (default 1)")
    p.add_argument("--jobs", type=int, default=1, metavar="J", help="mutants run at once, each in its own copy")
    p.add_argument("--packages", default=",".join(MODEL_PACKAGES), metavar="P,Q",
                   help=f"model packages to mutate (default: all of {', '.join(MODEL_PACKAGES)})")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="per run (default: four times the pristine run's time and at least 60 s for the unit tests, "
                        "six times and at least 300 s for the checker: a busy machine slows a run several times)")
    p.add_argument("--checker-args", default=DEFAULT_CHECKER_ARGS, metavar="ARGS",
                   help=f"arguments of `kmodel check` (default {DEFAULT_CHECKER_ARGS!r})")
    p.add_argument("--json", default=None, metavar="PATH", help="write every result here")
    p.add_argument("--exclusions", default=None, metavar="PATH",
                   help="a JSON object of mutant id -> reason, added to the script's EXCLUSIONS")
    p.add_argument("--no-coverage", action="store_true",
                   help="run the checker on every mutant, even those the pristine check never executes")
    p.add_argument("--list", action="store_true", help="print the sample and stop (nothing is run)")
    p.add_argument("--checker-only-unit-killed", action="store_true",
                   help="run the checker only on the mutants the unit tests kill (the score's denominator): "
                        "faster; the checker's kills among the others are then not measured")
    p.add_argument("--require-reached", action="store_true",
                   help="require of every mutant's check the sometimes properties the pristine check reaches "
                        "(kmodel check --require-sometimes): a mutant that makes a fault stop biting is then killed "
                        "as 'unreached'")
    p.add_argument("--resume", default=None, metavar="PATH",
                   help="keep the results of an earlier run's --json file (same code, seed and checker arguments) "
                        "and run only the mutants it has not")
    p.add_argument("--recheck", default=None, metavar="PATH",
                   help="rerun the checker on today's code against the gaps of an earlier run's --json file "
                        "(mutants its unit tests killed and its checker did not), and print the merged report")
    p.add_argument("--from-json", default=None, metavar="PATH",
                   help="print the report of an earlier run's --json file with today's exclusions (nothing is run)")
    return p.parse_args(argv)


def chosen_packages(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in MODEL_PACKAGES]
    if unknown or not names:
        raise UsageError(f"--packages: unknown {', '.join(unknown) or '(none given)'}; "
                         f"choose among {', '.join(MODEL_PACKAGES)}")
    return tuple(n for n in MODEL_PACKAGES if n in names)


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    try:
        return _main(args)
    except UsageError as exc:
        print(f"mutation.py: error: {exc}", file=sys.stderr)
        return 2


def _main(args: argparse.Namespace) -> int:
    if args.sample < 1 or args.jobs < 1:
        raise UsageError("--sample and --jobs must be at least 1")
    packages = chosen_packages(args.packages)
    exclusions = read_exclusions(args.exclusions)
    if args.from_json:
        return reprint(args.from_json, exclusions)
    if args.recheck:
        return recheck(args.recheck, args.jobs, args.timeout, exclusions, args.json, args.require_reached)
    checker_args = shlex.split(args.checker_args)
    population, texts = all_mutants(ROOT, packages)
    mutants = sample(population, texts, args.sample, args.seed)
    print(f"{len(mutants)} of {len(population)} mutation points of {', '.join(packages)}, seed {args.seed}")
    if args.list:
        for m in in_file_order(mutants):
            before, after = mutator.changed_lines(m, texts[m.path])
            print(f"{m.ident}  {m.location()}  {m.operator}  - {before}  + {after}")
        return 0
    use_coverage = not args.no_coverage and importlib.util.find_spec("coverage") is not None
    if not use_coverage and not args.no_coverage:
        print("coverage.py is not installed (pip install -e '.[bench]'): the checker runs on every mutant")

    tree = tree_digest(ROOT)
    results_by_id: dict[str, Result] = {}
    if args.resume:
        results_by_id = resumable(args.resume, tree, args.seed, checker_args, args.checker_only_unit_killed,
                                  args.require_reached)
        results_by_id = {m.ident: results_by_id[m.ident] for m in mutants if m.ident in results_by_id}
        print(f"resuming {args.resume}: {len(results_by_id)} of the {len(mutants)} mutants already run",
              file=sys.stderr)
    todo = [m for m in mutants if m.ident not in results_by_id]

    def save(complete: bool, seconds: float) -> None:
        """The results so far, in run order, written whole after every mutant (so a stopped run keeps them)."""
        if not args.json:
            return
        done = [results_by_id[m.ident] for m in mutants if m.ident in results_by_id]
        tmp = Path(args.json + ".tmp")
        tmp.write_text(json.dumps({
            "seed": args.seed, "sample": args.sample, "packages": list(packages), "checker_args": checker_args,
            "checker_only_unit_killed": args.checker_only_unit_killed, "require_reached": args.require_reached,
            "tree": tree, "complete": complete,
            "population": len(population), "seconds": round(seconds, 1),
            "results": [r.to_json() for r in done]}, indent=1), encoding="utf-8")
        os.replace(tmp, args.json)

    started = time.perf_counter()
    spaces = [Workspace(ROOT, sys.executable) for _ in range(min(args.jobs, len(todo)))] if todo else []
    try:
        if todo:
            base = run_baseline(spaces[0], mutants, checker_args, use_coverage)
        free: "queue.Queue[Workspace]" = queue.Queue()
        for ws in spaces:
            free.put(ws)
        lock = threading.Lock()

        def one(m: Mutant) -> Result:
            ws = free.get()
            try:
                result = run_mutant(ws, m, texts[m.path], base, checker_args, args.timeout, args.timeout,
                                    args.checker_only_unit_killed, args.require_reached)
            finally:
                free.put(ws)
            with lock:
                results_by_id[m.ident] = result
                save(False, time.perf_counter() - started)
                print(f"[{len(results_by_id)}/{len(mutants)}] {m.ident} {m.location()} {m.operator}: unit "
                      f"{result.unit.kind} ({result.unit.seconds:.0f} s), checker {result.checker.kind} "
                      f"({result.checker.seconds:.0f} s)", file=sys.stderr, flush=True)
            return result

        if todo:
            with ThreadPoolExecutor(max_workers=len(spaces)) as pool:
                list(pool.map(one, todo))
    finally:
        for ws in spaces:
            ws.remove()
    elapsed = time.perf_counter() - started
    results = [results_by_id[m.ident] for m in mutants]
    save(True, elapsed)
    apply_exclusions(results, exclusions)
    print("\n".join(report(results, packages, checker_args)))
    per_mutant = sum(r.unit.seconds + r.checker.seconds for r in results) / len(results)
    print(f"\nran in {elapsed:.0f} s with {max(1, len(spaces))} job(s): {per_mutant:.0f} s of runs per mutant; "
          f"--sample 300 would take about {300 * per_mutant / max(1, len(spaces)) / 60:.0f} min at this rate")
    return 0


def run_baseline(ws: Workspace, mutants: list[Mutant], checker_args: list[str], use_coverage: bool) -> Baseline:
    cached = use_coverage and reach_cache(ROOT, checker_args).exists()
    print(f"baseline: unit tests of {', '.join(sorted({m.package for m in mutants}))}, then "
          + ("the check's reach from a cache" if cached else "the check under coverage" if use_coverage
             else "the check"), file=sys.stderr)
    base = baseline(ws, ROOT, tuple(sorted({m.package for m in mutants})), checker_args, use_coverage)
    print(f"baseline: {sum(base.unit_seconds.values()):.0f} s of unit tests, check {base.checker_seconds:.0f} s",
          file=sys.stderr)
    return base


def resumable(path: str, tree: str, seed: int, checker_args: list[str], only_unit_killed: bool,
              require_reached: bool = False) -> dict[str, Result]:
    """The results of an earlier run (its --json file) that this run may keep: only from the same tree (model,
    invariants and unit tests unchanged), the same sample seed and the same checker arguments."""
    run, results = results_from_json(path)
    if run.get("tree") != tree:
        raise UsageError(f"--resume {path}: that run was made on other code (the model, the invariants or the "
                         f"unit tests changed since); run without --resume, or use --recheck to rerun its gaps")
    if run.get("seed") != seed or run.get("checker_args") != checker_args or \
            run.get("checker_only_unit_killed", False) != only_unit_killed or \
            run.get("require_reached", False) != require_reached:
        raise UsageError(f"--resume {path}: that run used seed {run.get('seed')}, checker arguments "
                         f"{' '.join(run.get('checker_args', []))!r}, checker-only-unit-killed "
                         f"{run.get('checker_only_unit_killed', False)} and require-reached "
                         f"{run.get('require_reached', False)}; give the same options")
    return {r.mutant.ident: r for r in results}


def recheck(path: str, jobs: int, timeout: Optional[float], exclusions: dict[str, str], json_out: Optional[str],
            require_reached: bool = False) -> int:
    """Rerun the checker, on today's code, against the gaps of an earlier run: the mutants its unit tests killed
    and its checker did not (reached). Everything else is kept as it was; the merged report is printed (and
    written to `json_out`). For judging new invariants: an invariant added since can only add kills, while a
    change of the model itself may change any result, which only a new run measures."""
    run, results = results_from_json(path)
    packages = tuple(run["packages"])
    checker_args = run["checker_args"]
    _, texts = all_mutants(ROOT, packages)
    population = {m.ident: m for m in all_mutants(ROOT, packages)[0]}
    gaps = [r for r in results if r.unit.killed and r.checker.kind == "survived"]
    print(f"rechecking {len(gaps)} gaps of {path} ({len(results)} mutants) with "
          f"`kmodel check {' '.join(checker_args)}`", file=sys.stderr)
    spaces = [Workspace(ROOT, sys.executable) for _ in range(min(jobs, len(gaps)))] if gaps else []
    started = time.perf_counter()
    extra: list[str] = []
    if require_reached and spaces:
        pristine = spaces[0].checker(checker_args, timeout or 3600.0)
        if pristine.kind != "survived":
            raise UsageError(f"`kmodel check {' '.join(checker_args)}` fails on today's code without a mutant "
                             f"({pristine.kind}: {pristine.detail})")
        extra = require_args(Baseline(situations=spaces[0].situations_reached()), True)
        print(f"the pristine check reaches {len(extra and extra[1].split(','))} situations, required of every "
              f"mutant", file=sys.stderr)
    try:
        free: "queue.Queue[Workspace]" = queue.Queue()
        for ws in spaces:
            free.put(ws)
        lock = threading.Lock()
        done = [0]

        def one(r: Result) -> None:
            m = population.get(r.mutant.ident)
            if m is None:
                r.checker = Outcome("survived", "this mutant no longer exists in today's code: not rerun")
            else:
                ws = free.get()
                try:
                    ws.write(m.path, mutator.apply(m, texts[m.path]))
                    try:
                        r.checker = ws.checker(checker_args + extra, timeout or 1800.0)
                    finally:
                        ws.write(m.path, texts[m.path])
                finally:
                    free.put(ws)
            with lock:
                done[0] += 1
                print(f"[{done[0]}/{len(gaps)}] {r.mutant.ident} {r.mutant.location()}: checker {r.checker.kind} "
                      f"({r.checker.seconds:.0f} s)", file=sys.stderr, flush=True)

        if gaps:
            with ThreadPoolExecutor(max_workers=len(spaces)) as pool:
                list(pool.map(one, gaps))
    finally:
        for ws in spaces:
            ws.remove()
    apply_exclusions(results, exclusions)
    print(f"{len(results)} of {run['population']} mutation points, seed {run['seed']} (from {path}, its gaps "
          f"rechecked in {time.perf_counter() - started:.0f} s)")
    print("\n".join(report(results, packages, checker_args)))
    if json_out:
        Path(json_out).write_text(json.dumps({**run, "tree": tree_digest(ROOT), "complete": True,
                                              "rechecked": len(gaps),
                                              "results": [r.to_json() for r in results]}, indent=1),
                                  encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
