"""Parallel campaigns (`kmodel check --workers N`, `--scheduler ADDRESS`): the shards a budget splits into, the
merged report's deduplication, the shared example database, usage errors, and real runs: one worker and a local
cluster of two (the same merged digest, under two PYTHONHASHSEEDs) and a `dask scheduler` with two `dask worker`
processes on 127.0.0.1 (examples summed, the variant's violation reported once, its trace replaying), and the
example database in a real redis-server shared by two runs in different folders."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import attrs
import pytest
from hypothesis.database import InMemoryExampleDatabase

from kmodel.checker.example_db import ForgivingDatabase, Saved, found_entries, save_found, shard_database
from kmodel.checker.merge import distinct_violations, merge_outcomes
from kmodel.checker.run import CheckOptions
from kmodel.checker.shards import (MIN_SHARD_EXAMPLES, SHARD_EXAMPLES, Shard, ShardOutcome, plan_shards,
                                  run_shard, shard_seed)
from kmodel.checker.trace import read_trace
from kmodel.cli import main

FOUND = Path(__file__).parents[1] / "report" / "traces" / "seed-14-no-cidr-leak.json"
BIN = Path(sys.executable).parent


def test_a_budget_splits_into_shards_each_with_a_seed_of_its_own():
    options = CheckOptions(examples=101, seed=3)
    shards = plan_shards(options)
    assert [s.examples for s in shards] == [26, 25, 25, 25] and [s.index for s in shards] == [0, 1, 2, 3]
    assert len({s.seed for s in shards}) == 4
    # blake2b of the seed, index and count, never Python's hash(): the same under any PYTHONHASHSEED
    assert shards[0].seed == shard_seed(3, 0, 4) == 2094134528373733378
    assert plan_shards(CheckOptions(examples=7, seed=3)) == [Shard(0, 1, 3, 7)]  # one shard is the campaign itself


def test_the_plan_is_a_function_of_the_budget_alone_in_shards_that_two_workers_share():
    dev = plan_shards(CheckOptions(seed=3))  # the dev profile's 200 examples
    assert len(dev) == 200 // SHARD_EXAMPLES == 8 and {s.examples for s in dev} == {SHARD_EXAMPLES}
    assert len(plan_shards(CheckOptions(seed=3, profile="campaign"))) == 40  # its 1,000
    # an even count: two workers share it evenly
    assert [s.examples for s in plan_shards(CheckOptions(examples=60, profile="campaign"))] == [30, 30]
    assert [s.examples for s in plan_shards(CheckOptions(examples=75))] == [38, 37]
    assert [s.examples for s in plan_shards(CheckOptions(examples=100))] == [25, 25, 25, 25]


def test_a_shard_is_large_enough_for_hypothesis_to_run_its_phases():
    # 20 examples at least (MIN_SHARD_EXAMPLES): a budget too small for two such shards is one
    assert [s.examples for s in plan_shards(CheckOptions(examples=50))] == [25, 25]
    assert [s.examples for s in plan_shards(CheckOptions(examples=49))] == [49]
    assert [s.examples for s in plan_shards(CheckOptions(examples=2))] == [2]
    assert all(s.examples >= MIN_SHARD_EXAMPLES for n in range(40, 400) for s in plan_shards(CheckOptions(examples=n)))


def test_hypothesis_targets_half_a_shard_of_20_examples_and_none_of_a_smaller_one(monkeypatch):
    # why MIN_SHARD_EXAMPLES is 20: the Hypothesis release kmodel pins starts its targeted phase at half the
    # budget, but never before the 10th valid example
    from hypothesis.internal.conjecture.engine import ConjectureRunner

    started_at: list[int] = []
    optimise = ConjectureRunner._run_optimise_pass

    def recorded(runner: ConjectureRunner) -> None:
        started_at.append(runner.valid_test_cases)
        optimise(runner)

    monkeypatch.setattr(ConjectureRunner, "_run_optimise_pass", recorded)
    for examples in (MIN_SHARD_EXAMPLES, 8):
        run_shard(CheckOptions(examples=examples, steps=2), Shard(0, 2, 6, examples))
    assert started_at == [MIN_SHARD_EXAMPLES // 2]  # the 20-example shard's, at its half; the 8-example one none


def _outcome(index: int, failure: dict | None, examples: int = 5) -> ShardOutcome:
    return ShardOutcome(shard=Shard(index, 3, shard_seed(0, index, 3), 10), examples=examples, steps=10 * examples,
                        rule_steps=examples, events=100 * examples, digest=f"d{index}",
                        checks={"no-cidr-leak": examples}, violations={}, rules={}, reached={"rolling-update": 1},
                        first_reached={"rolling-update": index + 1}, invariant_seconds=0.1, seconds=1.0,
                        stopped=False, failure=failure)


def test_the_merged_report_sums_the_shards_and_reports_one_bug_once_with_the_workers_that_found_it():
    trace = read_trace(FOUND)
    same = trace.to_json()
    other = attrs.evolve(trace, actions=trace.actions[:-2] + trace.actions[-1:]).to_json()
    outcomes = [_outcome(2, same), _outcome(0, same, examples=3), _outcome(1, other)]
    found = distinct_violations(outcomes)
    assert [(t.violation.invariant, len(t.actions), fields) for t, _, fields in found] == [
        ("no-cidr-leak", len(trace.actions), {"workers": 2, "found_by": [0, 2]}),
        ("no-cidr-leak", len(trace.actions) - 1, {"workers": 1, "found_by": [1]})]
    result = merge_outcomes(CheckOptions(examples=30), outcomes, 2.0)
    assert result.stats.examples == 13 and result.stats.checks["no-cidr-leak"] == 13
    assert result.stats.reached == {"rolling-update": 3} and result.stats.first_reached == {"rolling-update": 1}
    # the digest of the shards' digests in shard order, whatever order they came back in
    assert result.stats.trace_digest() == merge_outcomes(CheckOptions(examples=30), outcomes[::-1], 1.0) \
        .stats.trace_digest()
    assert result.failure is not None and len(result.failure.actions) == len(trace.actions)


def test_failures_a_worker_saves_reach_the_shared_database_only_through_the_caller(tmp_path):
    spec = str(tmp_path / "db")
    options = CheckOptions(variant="blind-writes", seed=1)
    db, view = shard_database(spec, options)
    db.save(b"key", b"failing")
    assert list(db.fetch(b"key")) == []  # a worker never reads back what it saved itself
    entries = found_entries(view)
    assert list(entries.values()) == [[b"failing"]]
    assert save_found(spec, [entries]) == Saved(written=1)
    again, _ = shard_database(spec, attrs.evolve(options, seed=2))  # any seed of the same campaign replays it
    assert list(again.fetch(b"key")) == [b"failing"]
    elsewhere, _ = shard_database(spec, CheckOptions(variant="polling"))  # another campaign's never
    assert list(elsewhere.fetch(b"key")) == []


@pytest.mark.parametrize("argv, words", [
    (["--workers", "0"], "--workers 0"),
    (["--workers", "many"], "--workers many"),
])
def test_bad_parallel_options_exit_2_with_one_line(argv, words, capsys, tmp_path):
    assert main(["check", "--report", str(tmp_path / "r"), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and words in err and "Traceback" not in err


def test_a_redis_database_without_the_redis_package_is_one_line(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "redis", None)  # import redis fails
    assert main(["check", "--report", str(tmp_path / "r"), "--database", "redis://127.0.0.1:6379/0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "pip install 'kmodel[redis]'" in err


def _free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_redis_database_that_does_not_answer_is_one_line(capsys, tmp_path):
    pytest.importorskip("redis")
    port = _free_port()  # nothing listens on it
    assert main(["check", "--report", str(tmp_path / "r"), "--database", f"redis://:secret@127.0.0.1:{port}/0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err and "internal error" not in err
    assert f"--database redis://:***@127.0.0.1:{port}/0: Redis does not answer" in err and "secret" not in err
    assert not (tmp_path / "r" / "report.json").exists()


@pytest.mark.parametrize("spec, seen", [
    ("redis://:pw@10.0.0.5:6379/0", "redis://:***@10.0.0.5:6379/0"),
    ("rediss://team:pw@redis.example:6380/2", "rediss://team:***@redis.example:6380/2"),
    ("redis://[::1]:6379/0", "redis://[::1]:6379/0"),
    ("redis://:pw@[::1]/0", "redis://:***@[::1]/0"),
    (".hypothesis/kmodel", ".hypothesis/kmodel"),
])
def test_a_redis_password_is_never_shown(spec, seen):
    from kmodel.checker.example_db import shown

    assert shown(spec) == seen


class _FailingAfter(InMemoryExampleDatabase):
    """A database whose calls fail once `calls` of them have been answered (a fetch fails as it is read)."""

    def __init__(self, calls: int) -> None:
        super().__init__()
        self.calls, self.asked = calls, 0

    def _ask(self) -> None:
        self.asked += 1
        if self.asked > self.calls:
            raise ConnectionError("Error 111 connecting to 127.0.0.1:6379.\nConnection refused.")

    def fetch(self, key):
        self._ask()
        yield from super().fetch(key)

    def save(self, key, value):
        self._ask()
        super().save(key, value)


def test_a_database_that_fails_is_set_aside_at_its_first_error_and_counts_what_it_did_not_save():
    inner = _FailingAfter(calls=2)
    db = ForgivingDatabase(inner)
    db.save(b"k", b"one")
    assert list(db.fetch(b"k")) == [b"one"] and db.error is None
    db.save(b"k", b"two")  # the third call fails: set aside, one line
    assert db.error == "ConnectionError: Error 111 connecting to 127.0.0.1:6379. Connection refused."
    assert db.unsaved == 1
    db.save(b"k", b"three")  # a shrink keeps the smaller failing example and deletes the one before
    db.delete(b"k", b"two")
    assert db.unsaved == 1
    db.move(b"k", b"k.secondary", b"three")  # a larger one Hypothesis keeps aside: not a failure to replay
    assert db.unsaved == 0
    db.save(b"k", b"four")
    assert list(db.fetch(b"k")) == [] and db.unsaved == 1 and inner.asked == 3  # never asked again
    lazy = ForgivingDatabase(_FailingAfter(calls=0))  # a fetch that fails only as it is read is caught too
    assert list(lazy.fetch(b"k")) == [] and lazy.error is not None


def test_the_caller_counts_what_an_unreachable_redis_did_not_take(tmp_path):
    pytest.importorskip("redis")
    saved = save_found(f"redis://127.0.0.1:{_free_port()}/0", [{b"k": [b"one", b"two"]}, {b"j": [b"three"]}])
    assert saved.written == 0 and saved.unsaved == 3 and saved.error.startswith("ConnectionError: ")
    assert save_found(str(tmp_path / "db"), [{b"k": [b"one", b"two"]}]) == Saved(written=2)


def test_the_caller_counts_a_save_the_database_dropped_without_a_word(monkeypatch):
    import kmodel.checker.example_db as example_db

    class DropsTwo(InMemoryExampleDatabase):  # as Hypothesis' folder database does with a write it cannot make
        def save(self, key, value):
            if value != b"two":
                super().save(key, value)

    monkeypatch.setattr(example_db, "open_database", lambda spec: DropsTwo())
    assert save_found("db", [{b"k": [b"one", b"two"]}]) == Saved(
        written=1, unsaved=1, error="it did not keep 1 of the 2 entries written")


def test_a_database_folder_that_cannot_be_made_is_one_line(capsys, tmp_path):
    (tmp_path / "file").write_text("")
    assert main(["check", "--report", str(tmp_path / "r"), "--database", str(tmp_path / "file" / "db")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "is a file, so the folder cannot be made" in err


def _check(folder: Path, *args: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    run = subprocess.run([str(BIN / "kmodel"), "check", "--report", "r", *args], cwd=folder, capture_output=True,
                         text=True, timeout=240, env={**os.environ, **(env or {})})
    assert run.returncode in (0, 1), run.stdout + run.stderr
    return run, json.loads((folder / "r" / "report.json").read_text())


def test_one_worker_and_two_give_the_same_merged_digest_under_any_hash_seed(tmp_path):
    runs = {}
    for workers, hashseed in (("2", "1"), ("1", "2")):
        folder = tmp_path / workers
        folder.mkdir()
        run, report = _check(folder, "--workers", workers, "--examples", "50", "--steps", "2", "--seed", "3",
                             "--no-stop-on-first", "--database", "none", env={"PYTHONHASHSEED": hashseed})
        assert report["parallel"]["shards"] == len(report["workers"]) == 2
        assert [w["budget"] for w in report["workers"]] == [25, 25]
        assert report["figures"]["examples_run"] == sum(w["examples"] for w in report["workers"])
        runs[workers] = run, report
    (two, parallel), (one, in_turn) = runs["2"], runs["1"]
    assert parallel["parallel"]["workers"] == 2 and not parallel["parallel"]["in_turn"]
    assert 0 < parallel["parallel"]["startup_seconds"] < parallel["figures"]["seconds"]
    assert "2 workers, 2 shards; the cluster answered after" in two.stdout
    assert in_turn["parallel"]["in_turn"] and in_turn["parallel"]["startup_seconds"] == 0
    assert "1 worker, 2 shards in turn in this process" in one.stdout
    assert in_turn["trace_digest"] == parallel["trace_digest"]
    assert in_turn["figures"]["model_events"] == parallel["figures"]["model_events"]
    assert in_turn["workers"][1]["seed"] == parallel["workers"][1]["seed"] == shard_seed(3, 1, 2)
    # and the same as the two shards one after the other here, whichever worker ran which
    options = CheckOptions(examples=50, steps=2, seed=3)
    here = [run_shard(options, shard) for shard in plan_shards(options)]
    assert merge_outcomes(options, here, 1.0).stats.trace_digest() == parallel["trace_digest"]


def test_one_worker_stops_the_shards_after_the_first_that_found_a_violation(monkeypatch):
    import kmodel.checker.parallel as parallel

    ran: list[tuple[int, bool]] = []

    def shard_run(options, shard, database=None, stop=None, on_example=None, on_replay=None):
        stopped = stop is not None and stop(None)
        ran.append((shard.index, stopped))
        found = read_trace(FOUND).to_json() if shard.index == 1 and not stopped else None
        return attrs.evolve(_outcome(0, found, examples=0 if stopped else 25), shard=shard, stopped=stopped)

    monkeypatch.setattr(parallel, "run_shard", shard_run)
    options = CheckOptions(examples=100, seed=3)
    run = parallel.run_in_turn(options)
    assert ran == [(0, False), (1, False), (2, True), (3, True)]
    assert run.result.stopped and run.result.failure is not None and run.found[0][2]["found_by"] == [1]
    ran.clear()
    run = parallel.run_in_turn(options, stop_on_first=False)  # --no-stop-on-first: every shard runs its share
    assert ran == [(0, False), (1, False), (2, False), (3, False)] and not run.result.stopped


def test_a_local_cluster_s_workers_are_forked_from_the_booted_process(monkeypatch):
    import kmodel.checker.shards as shards
    from kmodel.checker.parallel import dask_client

    # set here at run time, never by an import: a worker sees it only if it was forked from this process
    monkeypatch.setattr(shards, "_forked_from", os.getpid(), raising=False)
    with dask_client(1, None) as client:
        seen = client.submit(lambda: getattr(sys.modules["kmodel.checker.shards"], "_forked_from", None),
                             pure=False).result(timeout=60)
    assert seen == os.getpid()


def test_a_local_cluster_s_workers_run_without_dask_s_profiler():
    from kmodel.checker.parallel import dask_client

    def profiling() -> list[str]:  # the worker's periodic callbacks that sample and cycle its profile
        from distributed import get_worker

        return sorted(name for name in get_worker().periodic_callbacks if name.startswith("profile"))

    with dask_client(1, None) as client:
        assert client.submit(profiling, pure=False).result(timeout=60) == []


@pytest.fixture
def dask_cluster(tmp_path):
    """A `dask scheduler` and two `dask worker` processes (one thread each) on 127.0.0.1; its address."""
    scheduler_file = tmp_path / "scheduler.json"
    common = {"cwd": tmp_path, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    processes = [subprocess.Popen([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                                   "--no-dashboard", "--scheduler-file", str(scheduler_file)], **common)]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists():
            assert time.monotonic() < deadline, "the dask scheduler did not start within 60 s"
            time.sleep(0.2)
        for _ in range(2):
            processes.append(subprocess.Popen([str(BIN / "dask"), "worker", "--scheduler-file", str(scheduler_file),
                                               "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host",
                                               "127.0.0.1"], **common))
        from distributed import Client

        with Client(scheduler_file=str(scheduler_file), timeout=30) as client:
            client.wait_for_workers(2, timeout=90)
            address = client.scheduler.address
        yield address
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in reversed(processes):
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=15)


def test_a_campaign_on_a_dask_cluster_merges_its_workers_reports(dask_cluster, tmp_path):
    run, report = _check(tmp_path, "--scheduler", dask_cluster, "--workers", "2", "--variant", "blind-writes",
                         "--examples", "50", "--steps", "5", "--seed", "1", "--no-stop-on-first",
                         "--database", "examples")  # two shards of 25
    assert run.returncode == 1
    workers = report["workers"]
    assert len(workers) == 2 and report["parallel"]["scheduler"] == dask_cluster
    assert report["figures"]["examples_run"] == sum(w["examples"] for w in workers) >= 2
    assert report["figures"]["steps_run"] == sum(w["steps"] for w in workers)
    # both workers find the variant's lost update, through the same shrunk trace: reported once
    assert [w["violation"] for w in workers] == ["occ-no-lost-update"] * 2
    assert [(v["invariant"], v["workers"], v["found_by"]) for v in report["violations"]] == [
        ("occ-no-lost-update", 2, [0, 1])]
    assert report["parallel"]["database_entries_saved"] >= 1 and (tmp_path / "examples").is_dir()
    trace = tmp_path / report["violations"][0]["trace"]
    replayed = subprocess.run([str(BIN / "kmodel"), "replay", "--quiet", str(trace)], capture_output=True, text=True,
                              timeout=120)
    assert replayed.returncode == 1 and "occ-no-lost-update" in replayed.stdout


def test_a_shard_whose_database_does_not_answer_explores_without_it_and_says_so():
    from kmodel.checker.shards import run_shard

    pytest.importorskip("redis")
    options = CheckOptions(examples=2, steps=3, seed=1)
    [shard] = plan_shards(options)
    without = run_shard(options, shard)
    outcome = run_shard(options, shard, database=f"redis://127.0.0.1:{_free_port()}/0")
    assert outcome.database_error.startswith("ConnectionError: ") and without.database_error is None
    assert outcome.examples == without.examples == 2 and outcome.failure is None


def test_a_shard_told_to_stop_ends_its_campaign_as_the_next_example_starts():
    from kmodel.checker.shards import run_shard

    options = CheckOptions(examples=6, steps=3, seed=1)
    shard = Shard(1, 2, shard_seed(1, 1, 2), 3)
    asked: list[int] = []

    def stop(stats) -> bool:
        asked.append(stats.examples)
        return stats.examples >= 3

    outcome = run_shard(options, shard, stop=stop)
    assert outcome.stopped and outcome.examples == 2 and outcome.failure is None
    assert asked == [1, 2, 3]  # asked as each example starts, the third never ran
    assert not run_shard(options, shard).stopped


@pytest.fixture
def redis_server(tmp_path):
    """A real redis-server on a free port of 127.0.0.1, keeping nothing on disk: its redis:// URL and process."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("needs redis-server (Debian's redis-server; .ci/run installs it)")
    redis = pytest.importorskip("redis")
    port = _free_port()
    server = subprocess.Popen([binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no",
                               "--dir", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = redis.Redis(host="127.0.0.1", port=port)
        deadline = time.monotonic() + 30
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                assert server.poll() is None, "redis-server exited at start"
                assert time.monotonic() < deadline, "redis-server did not answer within 30 s"
                time.sleep(0.1)
        yield f"redis://127.0.0.1:{port}/0", server
    finally:
        server.terminate()
        server.wait(timeout=15)


@pytest.fixture
def redis_url(redis_server):
    """The redis:// URL of a real redis-server (`redis_server`)."""
    return redis_server[0]


def test_a_failure_kept_in_redis_is_replayed_first_by_the_next_run_on_another_machine(redis_url, tmp_path):
    import redis

    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    campaign = ("--variant", "edge-triggered", "--examples", "60", "--steps", "8", "--database", redis_url)
    # seed 1 finds a bug the variant's stale count makes on its own; the failing example goes to Redis
    run, report = _check(here, *campaign, "--seed", "1")
    assert run.returncode == 1 and len(report["violations"]) == 1
    saved = report["parallel"]["database_entries_saved"]
    found = report["violations"][0]["invariant"]
    assert found in ("replicaset-within-expectations", "converges-replicas")
    kept = redis.Redis.from_url(redis_url).keys("hypothesis-example:kmodel:*")
    assert kept
    # seed 2 on two workers, from another folder: each shard reads Redis as the run begins and replays what
    # seed 1 kept before anything else, so every one of them finds it within its first examples
    run, report = _check(there, *campaign, "--seed", "2", "--workers", "2", "--no-stop-on-first")
    assert run.returncode == 1 and not (there / ".hypothesis").exists()
    assert saved >= 1 and run.stdout.startswith(
        f"replaying {saved} saved failing example{'s' if saved > 1 else ''} from the example database {redis_url} "
        f"first")
    shards = len(report["workers"])
    assert shards == 2 and all(w["violation"] is not None and w["examples"] <= 3 for w in report["workers"])
    assert [(v["invariant"], v["workers"]) for v in report["violations"]] == [(found, shards)]
    assert report["parallel"]["database"] == redis_url


def test_a_redis_that_goes_away_during_a_run_loses_no_failure(redis_server, tmp_path, capsys, monkeypatch):
    import kmodel.checker.shards as shards

    url, server = redis_server
    original = shards.run_campaign

    def server_gone_then_run(*args, **kwargs):  # after the command's check that Redis answers, before the run
        if server.poll() is None:
            server.terminate()
            server.wait(timeout=15)
        return original(*args, **kwargs)

    monkeypatch.setattr(shards, "run_campaign", server_gone_then_run)
    report_dir = tmp_path / "r"
    code = main(["check", "--report", str(report_dir), "--variant", "edge-triggered", "--seed", "1",
                 "--examples", "60", "--steps", "8", "--database", url])
    out, err = capsys.readouterr()
    assert code == 1  # the run's own verdict: the variant's violation, found, shrunk and reported
    report = json.loads((report_dir / "report.json").read_text())
    assert len(report["violations"]) == 1 and (report_dir / report["violations"][0]["trace"]).exists()
    database = report["parallel"]
    assert database["database"] == url and database["database_error"].startswith("ConnectionError: ")
    assert database["database_entries_unsaved"] >= 1  # the shrunk failure Hypothesis would have kept
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"warning: --database {url} failed during the run and was set aside" in err
    assert "not saved, so the next run will not replay" in err and "the report and its traces are complete" in err
