"""`kmodel check --guided`: the corpus keeps the examples that took a branch outcome of the model no earlier one
took, later rounds start from them, a guided run is a function of its seed, and the corpus outlives the run in
the example database."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

from kmodel.checker.actions import ScaleDeployment
from kmodel.checker.example_db import CORPUS_KEY, load_corpus, save_corpus
from kmodel.checker.guided import ROUND_EXAMPLES, Corpus, CorpusEntry, Guide, entry_from_bytes, round_seed
from kmodel.checker.outcomes import ExampleOutcomes
from kmodel.checker.steering import KEEP_FLOOR, RARE_HITS, RuleEnergy, kept_rules, rarity_weights, weighted_pick
from kmodel.checker.stats import Stats
from kmodel.cli import main
from kmodel.ipam.bitmap import first_clear
from hypothesis.database import InMemoryExampleDatabase

BITMAP = "kmodel/ipam/bitmap.py"
FIRST = first_clear.__code__.co_firstlineno
#: first_clear's two guards: `if hi <= lo:` (two lines in) and `if free == 0:` (six lines in)
RANGE_OK = f"{BITMAP}:{FIRST + 2} -> {FIRST + 5}"
ALL_SET = f"{BITMAP}:{FIRST + 6} -> {FIRST + 7}"
ONE_FREE = f"{BITMAP}:{FIRST + 6} -> {FIRST + 8}"


def test_an_examples_outcomes_are_the_sides_of_the_branches_it_took_keyed_by_file_and_line():
    outcomes = ExampleOutcomes()
    outcomes.start()
    first_clear(0, 0, 4)  # one offset free
    outcomes.stop()
    taken = outcomes.taken()
    assert {RANGE_OK, ONE_FREE} <= taken
    assert ALL_SET not in taken
    outcomes.start()
    outcomes.stop()
    assert outcomes.taken() == set()  # read once: the collector is emptied


def test_the_corpus_keeps_an_example_that_took_a_new_outcome_and_drops_one_that_took_none():
    guide = Guide()
    stats = Stats()
    first, again, other = (ScaleDeployment("web", 1),), (ScaleDeployment("web", 2),), (ScaleDeployment("api", 3),)
    for actions, bits in ((first, 0), (again, 0), (other, 0b1111)):
        guide.begin(stats)
        first_clear(bits, 0, 4)
        guide.end(actions)
    assert [entry.actions for entry in guide.corpus.entries] == [first, other]  # `again` took nothing new
    assert guide.corpus.entries[1].first_took == (ALL_SET,)  # only what no earlier example took
    assert (guide.figures.measured, guide.figures.kept) == (3, 2)


def test_an_entry_is_kept_only_for_the_outcomes_it_took_first():
    corpus = Corpus()
    one, two, three = ((ScaleDeployment("web", n),) for n in (1, 2, 3))
    assert corpus.offer(one, {"a.py:1 -> 2", "a.py:1 -> 3"}) is not None
    assert corpus.offer(two, {"a.py:1 -> 3"}) is None
    kept = corpus.offer(three, {"a.py:1 -> 2", "a.py:4 -> exit"})
    assert kept is not None and kept.first_took == ("a.py:4 -> exit",)
    assert corpus.seen == {"a.py:1 -> 2", "a.py:1 -> 3", "a.py:4 -> exit"}


def test_a_corpus_read_back_from_the_database_is_the_same_in_a_stable_order():
    db = InMemoryExampleDatabase()
    entries = [CorpusEntry((ScaleDeployment(app, n),), (f"a.py:{n} -> exit",)) for app, n in (("web", 3), ("api", 1))]
    save_corpus(db, [e.to_bytes() for e in entries])
    save_corpus(db, [entries[0].to_bytes()])  # once only
    read = [entry_from_bytes(value) for value in load_corpus(db)]
    assert read == sorted(entries, key=CorpusEntry.to_bytes)
    assert Corpus(read).seen == {"a.py:3 -> exit", "a.py:1 -> exit"}
    assert entry_from_bytes(b'{"actions": [{"name": "no-such-action"}], "first_took": []}') is None
    assert list(db.fetch(CORPUS_KEY))


def test_each_round_has_a_seed_of_its_own_from_the_campaigns():
    assert round_seed(1, 0) == round_seed(1, 0)
    assert len({round_seed(1, 0), round_seed(1, 1), round_seed(2, 0)}) == 3


GUIDED = ["check", "--guided", "--fix", "all", "--examples", "30", "--steps", "8", "--seed", "3"]


def guided_run(report, *extra: str, hashseed: str = "0") -> tuple[str, dict]:
    """A guided `kmodel check` in a process of its own: its trace digest and report.json's guided section (the
    corpus it kept is never taken for saved failures to replay first)."""
    out = subprocess.run([sys.executable, "-m", "kmodel", *GUIDED, "--report", str(report), *extra],
                         capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONHASHSEED": hashseed})
    assert out.returncode == 0, out.stdout + out.stderr
    assert "saved failing example" not in out.stdout
    report_json = json.loads((report / "report.json").read_text())
    return report_json["trace_digest"], report_json["guided"]


def test_a_guided_run_is_a_function_of_its_seed_under_any_hash_seed(tmp_path):
    digest, guided = guided_run(tmp_path / "one", hashseed="1")
    again, guided_again = guided_run(tmp_path / "two", hashseed="2")
    assert digest == again
    assert guided == guided_again
    assert guided["rounds"] == -(-30 // ROUND_EXAMPLES) > 1
    assert guided["examples_from_corpus"] > 0  # the later rounds drew from the corpus


def test_a_guided_run_starts_from_the_corpus_an_earlier_run_kept_in_the_database(tmp_path):
    database = tmp_path / "db"
    digest, first = guided_run(tmp_path / "one", "--database", str(database))
    assert first["corpus_kept"] > 0 and first["corpus_loaded"] == 0
    again, second = guided_run(tmp_path / "two", "--database", str(database))
    assert second["corpus_loaded"] == first["corpus_kept"]
    assert again != digest  # its first round drew from the loaded corpus


@pytest.mark.parametrize("other, message", [
    (["--workers", "2"], "--guided steers one process: run it without --workers and --scheduler"),
    (["--reach"], "--guided and --reach each trace the run with coverage.py, which measures one at a time: choose "
                  "one (benchmarks/reach.py --compare-guided counts a guided run's reach)"),
])
def test_guided_with_what_it_cannot_share_is_a_usage_error(tmp_path, capsys, other, message):
    assert main(["check", "--guided", *other, "--report", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"kmodel check: error: {message}"]


def test_the_terminal_says_what_guidance_did_in_one_line():
    from kmodel.checker.command import guided_line

    section = {"rounds": 1, "examples_measured": 25, "corpus_kept": 12, "corpus_loaded": 0,
               "examples_from_corpus": 0, "outcomes_seen": 3210}
    assert guided_line(section) == ("guided: 1 round; 25 examples traced, 12 kept in the corpus; 0 started from a "
                                    "corpus example; 3,210 branch outcomes seen")
    loaded = guided_line({**section, "rounds": 3, "corpus_loaded": 40})
    assert loaded.startswith("guided: 3 rounds; 25 examples traced, 12 kept in the corpus (besides 40 loaded from "
                             "the database);")


# -- steering (kmodel.checker.steering) -------------------------------------------------------------------------

def test_a_rules_energy_is_its_share_of_the_regions_whose_outcomes_were_never_taken():
    energy = RuleEnergy()
    region = {"a.py:1 -> 2": "a.py:f", "a.py:1 -> 3": "a.py:f", "b.py:5 -> 6": "b.py:g"}.get
    energy.record("apply_pod", {"a.py:1 -> 2"}, region)  # drives f, whose other side was never taken
    energy.record("scale_deployment", {"b.py:5 -> 6"}, region)  # drives g, all of it taken
    energy.record("settle", {"a.py:1 -> 2", "b.py:5 -> 6"}, region)
    got = energy.energies({"a.py:f": 1, "b.py:g": 0})
    assert got == {"apply_pod": 0.5, "scale_deployment": 0.0, "settle": 0.5}


def test_a_steered_round_keeps_the_rules_of_most_energy_and_leaves_out_some_of_none():
    rules = [f"rule_{n}" for n in range(40)] + ["next_event", "never_fired"]
    energy = {name: (10.0 if name == "rule_0" else 0.0) for name in rules if name != "never_fired"}
    rounds = [kept_rules(rules, energy, random.Random(seed)) for seed in range(20)]
    assert all({"rule_0", "next_event", "never_fired"} <= set(kept) for kept in rounds)
    left_out = sum(len(rules) - len(kept) for kept in rounds) / (20 * 39)  # of the 39 rules of no energy
    assert 1 - KEEP_FLOOR - 0.1 < left_out < 1 - KEEP_FLOOR + 0.1
    assert kept_rules(rules, energy, random.Random(3)) == kept_rules(rules, energy, random.Random(3))
    assert kept_rules(rules, {}, random.Random(3)) == rules  # nothing learnt yet: every rule


def test_a_corpus_entry_that_took_rare_outcomes_is_drawn_more_often():
    hits = {"common": 50, "rare": 1, "also-rare": RARE_HITS}
    weights = rarity_weights([{"common"}, {"common", "rare", "also-rare"}], hits)
    assert weights == [1, 3]
    picks = [weighted_pick(draw, weights) for draw in range(400)]
    assert (picks.count(0), picks.count(1)) == (100, 300)
    assert weighted_pick(5, [2, 0, 5]) == 2 and weighted_pick(1, [2, 0, 5]) == 0  # a weight of 0 is never drawn


def test_the_guide_steers_from_what_its_measured_steps_took():
    guide = Guide()
    stats = Stats()
    guide.begin(stats)
    first_clear(0, 0, 4)  # one offset free: first_clear's `free == 0` guard has a side never taken
    guide.step("apply_pod")
    guide.step("scale_deployment")  # took nothing
    guide.end((ScaleDeployment("web", 1),))
    assert guide.outcomes.region_of(ONE_FREE) == f"{BITMAP}:first_clear"
    energy = guide.energy.energies(guide.outcomes.missing(guide.corpus.seen))
    assert energy["apply_pod"] > 0 and energy["scale_deployment"] == 0
    assert guide.hits[ONE_FREE] == 1 and guide.corpus.took[0] >= {RANGE_OK, ONE_FREE}


def test_a_steered_rounds_machine_leaves_rules_out_and_is_the_same_for_the_same_seed():
    from kmodel.checker.machine import KmodelMachine

    guide = Guide()
    assert guide.steered(KmodelMachine, random.Random(1)) is KmodelMachine  # nothing learnt yet
    region = {"a.py:1 -> 2": "a.py:f"}.get
    guide.outcomes.region_outcomes["a.py:f"] = {"a.py:1 -> 2", "a.py:1 -> 3"}
    for rule in ("apply_pod", "scale_deployment", "next_event"):
        guide.energy.record(rule, {"a.py:1 -> 2"} if rule == "apply_pod" else set(), region)
    guide.energy.record("scale_deployment", {"a.py:9 -> 10"}, {"a.py:9 -> 10": "a.py:g"}.get)

    def rules_of(machine: type) -> set[str]:
        return {rule.function.__name__ for rule in machine.setup_state().rules}

    machines = [guide.steered(KmodelMachine, random.Random(seed)) for seed in range(10)]
    assert all("apply_pod" in rules_of(m) and "next_event" in rules_of(m) for m in machines)
    assert any("scale_deployment" not in rules_of(m) for m in machines)
    assert all("delete_pod" in rules_of(m) for m in machines)  # no measured step of it: nothing known of it
    assert rules_of(guide.steered(KmodelMachine, random.Random(4))) == rules_of(machines[4])
