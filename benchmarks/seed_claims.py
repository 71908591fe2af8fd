"""Every claim the docs make about what a seed reaches, re-run, and the page that lists them (docs/seeds.md).

What a seed explores depends on the order of Hypothesis' draws: on the pinned Hypothesis release, the checker's
rules and the model's behaviour. A new rule or a change of behaviour moves every seed, so a sentence such as
"`kmodel check --seed 42` ends on the node IPAM leak" is only true until the next change. Such sentences live
here, as `CLAIMS`, each with the command, what it must do (pass, end on an invariant, or not end on one) and the
pages that cite it. This script runs them and writes docs/seeds.md from what it measured; the docs link there.
tests/docs/test_seed_claims.py re-runs the claims marked `in_suite` on every test run, checks the page lists
exactly these claims, and that no page cites a seed outside them.

Run: python benchmarks/seed_claims.py [--write] [--only ID[,ID...]] [--jobs N] [--suite]
  --write   write docs/seeds.md (only when every claim run holds; with --only, the others keep their
            figures from the page as it is)
  --only    run these claims
  --suite   run only the claims the test suite runs
Prints each run's outcome; exits 1 when a claim does not hold.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Optional, Sequence

import attrs

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "seeds.md"

PASS = "pass"  #: the run finds no violation (exit 0)
FAIL = "fail"  #: the run ends on `invariant` (exit 1)
AVOID = "avoid"  #: the run does not end on `invariant` (it passes, or ends on another one)


@attrs.frozen
class Claim:
    """One sentence of the docs about seeds: `args` of `kmodel check` (with `{seed}` when it stands for each of
    `seeds`), what each run must do, and the pages that say it."""

    id: str
    says: str
    args: str
    expect: str
    invariant: str = ""
    seeds: tuple[int, ...] = ()
    pages: tuple[str, ...] = ()
    #: cheap enough for the test suite to re-run on every test run (tests/docs/test_seed_claims.py)
    in_suite: bool = False

    def commands(self) -> list[str]:
        """The `kmodel check` command line of each run."""
        if not self.seeds:
            return [f"kmodel check {self.args}"]
        return [f"kmodel check {self.args.format(seed=seed)}" for seed in self.seeds]


def _every_fix_but(name: str) -> str:
    return f"--fix all --no-fix {name}"


def _not_reached(id: str, bug: str, fix: str, invariants: str, *, seeds: Sequence[int] = (),
                 options: str = "") -> Claim:
    """A bug no seed is known to reach: with every fix on but `fix`, no run ends on its `invariants`. The runs are
    the dev profile's at `seeds` (each with `options`), or the one run `options` says (a campaign's)."""
    seeds = tuple(seeds)
    if seeds:
        who = f"dev seeds {seeds[0]} to {seeds[-1]}" + (f" ({options})" if options else "")
        args = " ".join(a for a in ("--seed {seed}", options, _every_fix_but(fix)) if a)
    else:
        who, args = f"`kmodel check {options}`", f"{options} {_every_fix_but(fix)}"
    return Claim(id, f"Not reached by {who} with every other fix on: {bug}.", args, AVOID, invariants, seeds=seeds,
                 pages=("docs/upstream-bugs.md",))


CLAIMS: tuple[Claim, ...] = (
    Claim("quick-start", "The Quick start's main job finds nothing with every fix on.",
          "--seed 1 --fix all", PASS, pages=("README.md", "docs/index.md"), in_suite=True),
    Claim("past-known-bugs", "With every fix on, seed 69 explores its whole budget and finds nothing.",
          "--seed 69 --fix all", PASS, pages=("README.md", "docs/tour.md")),
    Claim("ci-profile", "The ci profile's derandomized run, with every fix on, finds nothing (docs/ci.md's "
          "workflow).",
          "--profile ci --seed 1 --fix all", PASS, pages=("docs/ci.md",), in_suite=True),
    Claim("nodeipam-leak", "The dev profile at seed 69 ends on node IPAM leaking the podCIDR of a node removed while "
          "kube-controller-manager restarted (nodeipam-release-by-owner's bug; the tour's example).",
          "--seed 69", FAIL, "no-cidr-leak",
          pages=("README.md", "docs/tour.md", "docs/upstream-bugs.md"), in_suite=True),
    Claim("stale-first-list", "A restarted kubelet's pods informer listing older than what it saw before "
          "(reflector-consistent-first-list's bug), reached in the dev profile with every other fix on.",
          "--seed 7 " + _every_fix_but("reflector-consistent-first-list"), FAIL, "restart-no-time-travel",
          pages=("docs/upstream-bugs.md",)),
    Claim("leader-paused", "A leader paused past its lease writes on waking (leaderelection-fence-writes' bug), "
          "reached in the dev profile with two of each and every other fix on.",
          "--seed 1 --controller-managers 2 --schedulers 2 " + _every_fix_but("leaderelection-fence-writes"),
          FAIL, "leader-acts-within-lease", pages=("docs/upstream-bugs.md",)),
    Claim("blind-writes", "The blind-writes anti-pattern (a variant) breaks an invariant at seed 1.",
          "--variant blind-writes --seed 1", FAIL, pages=("docs/checking.md", "docs/fixes.md"), in_suite=True),
    # what no seed is known to reach: the seeds tried, each with every other fix on
    _not_reached("annotation-not-reached", "the Deployment's stale desired-replicas annotation",
                 "deployment-refresh-annotations", "converges-replicas", seeds=range(1, 10)),
    _not_reached("compaction-not-reached", "a delete at the compaction revision", "etcd-keep-compaction-tombstone",
                 "converges-replicas,converges-proxy-rules,no-cidr-leak", seeds=range(1, 10)),
    _not_reached("max-retries-not-reached", "a Deployment dropped after maxRetries",
                 "deployment-retry-past-max-retries", "converges-replicas", seeds=range(5, 14)),
    _not_reached("mid-sync-not-reached", "a ReplicaSet deleted mid-sync", "replicaset-manage-only-current",
                 "converges-replicas", seeds=range(1, 11), options="--examples 50"),
    _not_reached("expectations-expire-not-reached", "a ReplicaSet's expectations expiring behind a stalled watch",
                 "replicaset-confirm-expired-expectations", "replicaset-within-expectations", seeds=range(1, 11)),
    Claim("forgotten-host-port", "The scheduler forgetting a host port still held (scheduler-count-host-port-holders' "
          "bug), reached in the dev profile with every other fix on.",
          "--seed 14 " + _every_fix_but("scheduler-count-host-port-holders"), FAIL, "converges-replicas",
          pages=("docs/upstream-bugs.md",)),
    _not_reached("create-answered-504-not-reached", "a ReplicaSet creating twice after a create answered 504 that "
                 "was stored", "replicaset-expect-timed-out-creations", "replicaset-within-expectations",
                 seeds=range(11, 20)),
    _not_reached("expectations-expire-not-reached-in-a-campaign", "a ReplicaSet's expectations expiring behind a "
                 "stalled watch", "replicaset-confirm-expired-expectations", "replicaset-within-expectations",
                 options="--profile campaign --seed 3"),
    _not_reached("cidr-to-new-node-not-reached", "a Node being deleted losing its podCIDR to a new node",
                 "nodeipam-release-only-on-delete", "node-cidrs-disjoint", options="--profile campaign --seed 1"),
    _not_reached("eviction-gives-up-not-reached", "taint eviction giving up on a failed eviction",
                 "tainteviction-retry-failed-evictions", "converges-replicas", options="--profile campaign --seed 1"),
    _not_reached("pod-made-again-not-reached", "taint eviction deleting a StatefulSet pod made again under the "
                 "evicted one's name", "tainteviction-evict-only-the-scheduled-pod", "eviction-timing",
                 options="--profile campaign --seed 1"),
)


@attrs.frozen
class Outcome:
    """What one run did: its exit code, the invariant it ended on ("" for none) and its deterministic figures."""

    command: str
    exit: int
    invariant: str = ""
    examples: int = 0
    steps: int = 0
    digest: str = ""
    error: str = ""

    def holds(self, claim: Claim) -> bool:
        if self.exit not in (0, 1):
            return False
        if claim.expect == PASS:
            return self.exit == 0
        if claim.expect == FAIL:
            return self.exit == 1 and claim.invariant in ("", self.invariant)
        return self.invariant not in claim.invariant.split(",")

    def summary(self) -> str:
        what = f"ends on `{self.invariant}`" if self.invariant else "passes"
        if self.exit not in (0, 1):
            what = f"exit {self.exit}: {self.error}"
        return f"{what}; {self.examples} examples, {self.steps} steps, digest `{self.digest}`"


def run(command: str, python: str = sys.executable, timeout: float = 3600) -> Outcome:
    """Run one `kmodel check` command line (in a scratch report folder) and read its report."""
    args = command.split()[2:]
    with tempfile.TemporaryDirectory(prefix="kmodel-seed-claim-") as scratch:
        proc = subprocess.run([python, "-m", "kmodel", "check", *args, "--report", scratch], cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout)
        try:
            report = json.loads((Path(scratch) / "report.json").read_text())
        except (OSError, ValueError):
            return Outcome(command, proc.returncode, error=(proc.stderr.strip() or proc.stdout.strip())[-300:])
    violations = report.get("violations") or []
    figures = report.get("figures") or {}
    return Outcome(command, proc.returncode, violations[0]["invariant"] if violations else "",
                   int(figures.get("examples_run", 0)), int(figures.get("steps_run", 0)),
                   str(report.get("trace_digest", "")))


def expectation(claim: Claim) -> str:
    if claim.expect == PASS:
        return "passes (exit 0)"
    if claim.expect == FAIL:
        return f"ends on `{claim.invariant}` (exit 1)" if claim.invariant else "ends on a violation (exit 1)"
    return "does not end on " + " nor ".join(f"`{name}`" for name in claim.invariant.split(","))


HEADER = """# Seeds

<!-- Generated by `python benchmarks/seed_claims.py --write`, which re-runs every claim; edit CLAIMS there, not
this page -->

What a seed explores depends on the order of Hypothesis' draws, so on three things: the Hypothesis release
pinned in `constraints.txt`, the checker's rules and the model's behaviour. A change to any of them moves every
seed. So every claim the documentation makes about a seed is listed here with the command that shows it, what
that command does, and what it measured the last time this page was written (the figures are deterministic:
the same on any machine).

`python benchmarks/seed_claims.py` re-runs them all (add `--write` to rewrite this page);
`tests/docs/test_seed_claims.py` re-runs those marked *in the suite* on every test run, and fails when a page
cites a seed that is not here.

| claim | expected | in the suite | cited by |
|---|---|---|---|
"""


def render(outcomes: dict[str, list[str]]) -> str:
    """docs/seeds.md: every claim, with the summary of each of its runs (`outcomes`: claim id -> summaries)."""
    lines = [HEADER.rstrip("\n")]
    for claim in CLAIMS:
        cited = ", ".join(f"[{Path(p).stem}]({Path(p).name})" if p.startswith("docs/") else p for p in claim.pages)
        lines.append(f"| [{claim.id}](#{claim.id}) | {expectation(claim)} | {'yes' if claim.in_suite else 'no'} "
                     f"| {cited} |")
    for claim in CLAIMS:
        lines += ["", f"## {claim.id}", "", claim.says, "", "```sh", *claim.commands(), "```", "",
                  f"Expected: each run {expectation(claim)}.", ""]
        measured = outcomes.get(claim.id) or ["not measured yet"] * len(claim.commands())
        if len(measured) == 1:
            lines.append(f"Measured: {measured[0]}.")
        else:
            lines.append("Measured:")
            lines.append("")
            lines += [f"- `--seed {seed}`: {text}" for seed, text in zip(claim.seeds, measured)]
    return "\n".join(lines) + "\n"


def measured_on_page(page: str) -> dict[str, list[str]]:
    """The summaries the page shows, by claim id (to keep those of claims not re-run)."""
    found: dict[str, list[str]] = {}
    for section in re.split(r"^## ", page, flags=re.M)[1:]:
        name, _, body = section.partition("\n")
        one = re.search(r"^Measured: (.*)\.$", body, flags=re.M)
        many = re.findall(r"^- `--seed \d+`: (.*)$", body, flags=re.M)
        found[name.strip()] = [one.group(1)] if one else many
    return found


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write docs/seeds.md")
    parser.add_argument("--only", default="", help="run only these claims (comma-separated ids)")
    parser.add_argument("--suite", action="store_true", help="run only the claims the test suite runs")
    parser.add_argument("--jobs", type=int, default=2, help="runs at once (default 2)")
    args = parser.parse_args(argv)
    only = [c for c in args.only.split(",") if c]
    unknown = sorted(set(only) - {c.id for c in CLAIMS})
    if unknown:
        print(f"seed_claims.py: error: unknown claim {', '.join(unknown)}; claims: "
              f"{', '.join(c.id for c in CLAIMS)}", file=sys.stderr)
        return 2
    chosen = [c for c in CLAIMS if (not only or c.id in only) and (not args.suite or c.in_suite)]
    runs = [(claim, command) for claim in chosen for command in claim.commands()]
    outcomes: dict[tuple[str, str], Outcome] = {}
    failed = 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        pending = {pool.submit(run, command): (claim, command) for claim, command in runs}
        for done in as_completed(pending):  # each as it ends: a long run does not hide the others' outcomes
            claim, command = pending[done]
            o = outcomes[claim.id, command] = done.result()
            ok = o.holds(claim)
            failed += not ok
            print(f"{'holds ' if ok else 'BROKEN'} {claim.id}: {o.command}: {o.summary()}", flush=True)
    measured = measured_on_page(PAGE.read_text()) if PAGE.exists() else {}
    for claim in chosen:
        measured[claim.id] = [outcomes[claim.id, command].summary() for command in claim.commands()]
    if args.write and not failed:
        PAGE.write_text(render(measured))
        print(f"wrote {PAGE.relative_to(ROOT)}")
    elif args.write:
        print(f"{failed} run(s) do not hold: docs/seeds.md not written (fix the claim or the docs that make it)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
