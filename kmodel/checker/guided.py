"""A guided campaign (`kmodel check --guided`): steer the exploration toward branch outcomes never taken.

Theory of operation
-------------------
A plain campaign draws every example afresh from the warmed-up cluster, so it keeps taking the same common
branch outcomes of the model and seldom gets deep enough for the rare ones. A guided campaign keeps a *corpus*:
the examples that took a branch outcome of the model no earlier example had taken (measured by coverage.py,
kmodel.checker.outcomes), each as the list of its actions. A new example starts, in its first step (the
`from_corpus` initialize rule), by replaying the first actions of one corpus example, which puts the cluster
back where that example had got to, and the rules then extend it with fresh draws: what was new once is the
starting point of what may be new next. That rule draws which entry (or none: a fresh example, as a plain
campaign's) and how many of its actions; both are whole numbers taken modulo what there is, so a draw always
means something.

Rounds. Hypothesis assumes an example is a function of its draws; a corpus that grew in the middle of a run
would change what the same draws do and trip its checks for flaky data generation. So the campaign runs in
rounds of ROUND_EXAMPLES examples, each a Hypothesis run of its own with a seed derived from the campaign's
seed and the round's number (`round_seed`), over the corpus as it stood when the round began; the examples a
round keeps are drawn from in the next. Everything that decides (the corpus, its order, the outcomes seen) is
a function of the seed and the model's behaviour: the keys are file:line pairs, the corpus keeps the order the
examples were found in, and one loaded from the database is sorted. The campaign's trace digest covers every
round's examples, in order.

Steering (kmodel.checker.steering). A measured example is read step by step (`Guide.step`, from the machine's
`_guard`, which every rule's step goes through), so the campaign learns which rule took which outcomes; the
closing settle's are no rule's. At a round's start, each rule's energy (the open outcomes of the functions its
steps drive) decides which rules the round's machine leaves out (`Guide.steered`: a subclass whose left-out
rules are plain methods), and each corpus entry's rarity weights `from_corpus`'s draw of it.

What it costs. coverage.py's C tracer makes the code it traces two to three times as slow, so it traces
only where it can teach the corpus something. Only an example's own steps are traced, from the end of
`from_corpus` on: the actions it replayed took nothing their entry had not taken when it was measured. And not
every example is measured: every example of the first round (the corpus has to start somewhere), then one in
MEASURE_EVERY, chosen by the example's number, never by time. An example not measured is explored all the
same; only what it would have taught the corpus is lost.

The corpus is kept in the example database when the run has one (`--database`: kmodel.checker.example_db,
`load_corpus` and `save_corpus`), under the campaign's identity, so the next run with the same options starts
from it. Without one, a guided run starts from an empty corpus, and what it explores is a function of its seed
and options alone.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any, Callable, ClassVar, Iterable, Optional, Sequence

import attrs
from hypothesis import seed as hypothesis_seed
from hypothesis import settings as Settings
from hypothesis import strategies as st
from hypothesis.database import ExampleDatabase
from hypothesis.stateful import initialize, run_state_machine_as_test

from kmodel.checker.action_json import action_from_json
from kmodel.checker.actions import Action
from kmodel.checker.example_db import load_corpus, save_corpus
from kmodel.checker.outcomes import ExampleOutcomes
from kmodel.checker.session import TraceDiverged
from kmodel.checker.steering import RuleEnergy, kept_rules, rarity_weights, weighted_pick

#: examples per round: the corpus a round draws from is the one the rounds before it left (short rounds, so that
#: what one example finds is drawn from soon)
ROUND_EXAMPLES = 10
#: after the first round, one example in this many is measured (coverage.py's tracer makes a traced example
#: two to three times as dear; measuring one in two rather than one in four bought no more outcomes per CPU-minute)
MEASURE_EVERY = 4
#: the draws of `from_corpus`: an entry and a cut, each taken modulo what there is (wide enough that an entry's
#: draw, past the choice of none, still spans the rarity weights of a corpus of hundreds)
DRAW = st.integers(0, 2**24 - 1)
#: what the closing settle's outcomes are attributed to: no rule (every example runs it)
CLOSING = "(closing settle)"


@attrs.frozen
class CorpusEntry:
    """An example kept because it took branch outcomes no earlier one had: its actions after the warm-up (its
    closing settle not included) and the outcomes it took first (``file:line -> target``, sorted)."""

    actions: tuple[Action, ...]
    first_took: tuple[str, ...]

    def to_bytes(self) -> bytes:
        return json.dumps({"actions": [a.to_json() for a in self.actions], "first_took": list(self.first_took)},
                          sort_keys=True, separators=(",", ":")).encode()


def entry_from_bytes(value: bytes) -> Optional[CorpusEntry]:
    """A corpus entry read back from the database; None for one that does not read (another model's actions)."""
    try:
        data = json.loads(value)
        return CorpusEntry(tuple(action_from_json(a) for a in data["actions"]),
                           tuple(str(k) for k in data["first_took"]))
    except (ValueError, KeyError, TypeError):
        return None


def round_seed(seed: int, number: int) -> int:
    """The Hypothesis seed of a round: a function of the campaign's seed and the round's number only."""
    return int.from_bytes(hashlib.blake2b(f"kmodel-guided:{seed}:{number}".encode(), digest_size=8).digest(), "big")


class Corpus:
    """The kept examples, in the order they were found (loaded ones first, sorted by their bytes), and every
    outcome taken so far; `offer` keeps an example that took one never taken before and drops any other."""

    def __init__(self, entries: Iterable[CorpusEntry] = ()) -> None:
        self.entries: list[CorpusEntry] = []
        #: every outcome each entry took (a loaded entry: those it took first, all that the database keeps)
        self.took: list[frozenset[str]] = []
        self.seen: set[str] = set()
        self.loaded = 0
        for entry in sorted(entries, key=CorpusEntry.to_bytes):
            self.entries.append(entry)
            self.took.append(frozenset(entry.first_took))
            self.seen.update(entry.first_took)
            self.loaded += 1

    def offer(self, actions: Sequence[Action], taken: set[str]) -> Optional[CorpusEntry]:
        new = taken - self.seen
        if not new:
            return None
        entry = CorpusEntry(tuple(actions), tuple(sorted(new)))
        self.entries.append(entry)
        self.took.append(frozenset(taken))
        self.seen |= new
        return entry


@attrs.define
class GuidedFigures:
    """What a guided campaign did besides exploring: for the report and the terminal."""

    rounds: int = 0
    measured: int = 0  # examples traced by coverage.py
    kept: int = 0  # of those, kept in the corpus (this run)
    loaded: int = 0  # corpus entries the database gave the run to start from
    from_corpus: int = 0  # examples that started from a corpus entry's actions
    rules_left_out: int = 0  # rules the steered rounds left out, summed over the rounds
    outcomes: int = 0  # branch outcomes the measured examples took, in all (with those of the loaded corpus)

    def to_json(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "examples_measured": self.measured, "corpus_kept": self.kept,
                "corpus_loaded": self.loaded, "examples_from_corpus": self.from_corpus,
                "outcomes_seen": self.outcomes, "rules_left_out": self.rules_left_out,
                "round_examples": ROUND_EXAMPLES, "measure_every": MEASURE_EVERY}


class Guide:
    """A guided campaign's state: the corpus, the measurement and the figures; `explore` runs the rounds."""

    def __init__(self, components: Sequence[str] = (), database: Optional[ExampleDatabase] = None) -> None:
        self.database = database
        loaded = (entry_from_bytes(value) for value in load_corpus(database))
        self.corpus = Corpus(entry for entry in loaded if entry is not None)
        self.outcomes = ExampleOutcomes(components)
        self.figures = GuidedFigures(loaded=self.corpus.loaded, outcomes=len(self.corpus.seen))
        self.round = 0
        self.round_entries: tuple[CorpusEntry, ...] = ()
        self.round_weights: tuple[int, ...] = ()  # the draw weight of each of round_entries (steering)
        #: outcome -> how many measured examples took it (an entry's rarity), and each rule's energy
        self.hits: dict[str, int] = {}
        self.energy = RuleEnergy()
        self._measuring = False
        self._example_took: set[str] = set()
        self._counted = 0  # examples begun, across rounds

    # -- one example ----------------------------------------------------------------------------------------

    def begin(self, stats: Any) -> None:
        """An example's own steps start (after `from_corpus`): trace them if it is an example to measure (none
        once a violation is being shrunk)."""
        self._counted += 1
        if stats.first_failure_at is not None:
            return
        if self.round == 0 or self._counted % MEASURE_EVERY == 0:
            self.outcomes.start()
            self._measuring = True
            self._example_took = set()

    def step(self, rule: str) -> None:
        """A step of `rule` ran: if the example is measured, what it took is the rule's (RuleEnergy)."""
        if self._measuring:
            keys = self.outcomes.taken()
            self._example_took |= keys
            self.energy.record(rule, keys, self.outcomes.region_of)

    def end(self, actions: Sequence[Action]) -> None:
        """An example ended (its closing settle run): offer it to the corpus if it was measured."""
        if not self._measuring:
            return
        self.outcomes.stop()
        self._measuring = False
        self.figures.measured += 1
        took = self._example_took | self.outcomes.taken()
        for key in took:
            self.hits[key] = self.hits.get(key, 0) + 1
        if self.corpus.offer(actions, took) is not None:
            self.figures.kept += 1
        self.figures.outcomes = len(self.corpus.seen)

    def abandon(self) -> None:
        if self._measuring:
            self.outcomes.stop()
            self.outcomes.taken()
            self._measuring = False

    # -- the rounds -----------------------------------------------------------------------------------------

    def steered(self, machine: type, rng: random.Random) -> type:
        """The machine of a round: `machine` with the rules a steered swarm leaves out (kmodel.checker.steering)
        turned into plain methods, which Hypothesis does not pick; `machine` itself before any energy is known."""
        energy = self.energy.energies(self.outcomes.missing(self.corpus.seen))
        energy.pop(CLOSING, None)
        if not energy:
            return machine
        names = sorted(rule.function.__name__ for rule in machine.setup_state().rules)
        kept = set(kept_rules(names, energy, rng))
        left_out = [name for name in names if name not in kept]
        self.figures.rules_left_out += len(left_out)
        return type(machine.__name__, (machine,), {name: _plain(getattr(machine, name)) for name in left_out})

    def explore(self, machine: type, settings: Settings, seed: Optional[int],
                run: Callable[..., None] = run_state_machine_as_test) -> None:
        """Run `machine` (a class with GuidedRules among its bases) for `settings.max_examples` examples, in
        rounds (see the module docstring); a violation ends the campaign in the round that found it."""
        budget = settings.max_examples
        sizes = [ROUND_EXAMPLES] * (budget // ROUND_EXAMPLES) + [budget % ROUND_EXAMPLES] * bool(
            budget % ROUND_EXAMPLES)
        try:
            for size in sizes:  # Hypothesis' own budgets, adding up to the campaign's (as a plain run counts it)
                self.round_entries = tuple(self.corpus.entries)
                self.round_weights = tuple(rarity_weights(self.corpus.took, self.hits))
                self.figures.rounds = self.round + 1  # begun (a violation ends the campaign inside its round)
                number = round_seed(seed or 0, self.round)
                run(hypothesis_seed(number)(self.steered(machine, random.Random(number))),
                    settings=Settings(settings, max_examples=size))
                self.round += 1
        finally:
            self.abandon()
            save_corpus(self.database, [entry.to_bytes() for entry in self.corpus.entries[self.corpus.loaded:]])


def _plain(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` (a rule) as a method Hypothesis does not see as a rule (its rule marker is on the original)."""
    def plain(self: Any, *args: Any, **kwargs: Any) -> Any:
        return function(self, *args, **kwargs)

    plain.__name__ = function.__name__
    return plain


def guided_bases(bases: tuple[type, ...]) -> tuple[type, ...]:
    """The bases of a guided campaign's machine: GuidedRules first (its teardown wraps the machine's)."""
    return (GuidedRules, *bases)


class GuidedRules:
    """The mixin of a guided campaign's machine: the `from_corpus` initialize rule, which starts the
    measurement of the example's own steps, and the teardown that offers the example to the corpus (see the
    module docstring)."""

    guide: ClassVar[Optional[Guide]] = None
    cluster: Any
    session: Any
    stats: Any
    initial_actions: ClassVar[tuple]
    _do: Callable[[str, Any], None]  # KmodelMachine's
    _closing = False  # the teardown's closing settle is running

    @initialize(entry=DRAW, cut=DRAW)
    def from_corpus(self, entry: int, cut: int) -> None:
        """Replay the first actions of a corpus entry (`entry` modulo one more than the entries: 0 starts afresh;
        otherwise the rest of `entry` picks the entry by its rarity weight; `cut` modulo its actions: how many of its last actions to leave out, so that the least draw, where
        Hypothesis draws often and shrinks to, replays it whole), then let the rules extend it."""
        guide = type(self).guide
        if guide is None:
            return
        entries = guide.round_entries
        fresh = entry % (len(entries) + 1) == 0
        actions = () if fresh else entries[weighted_pick(entry // (len(entries) + 1), guide.round_weights)].actions
        if actions:
            guide.figures.from_corpus += 1
        for action in actions[: len(actions) - cut % len(actions)] if actions else ():
            try:
                self._do("from_corpus", action)
            except TraceDiverged:  # an entry of another model (an older database): extend from where it got
                break
        # measured from here on: what the replayed actions take, their corpus entry took when it was measured
        guide.begin(self.stats)

    def _guard(self, run: Callable[[], Any], rule_name: str) -> None:
        super()._guard(run, rule_name)  # type: ignore[misc]
        guide = type(self).guide
        if guide is not None:
            guide.step(CLOSING if self._closing else rule_name)

    def teardown(self) -> None:
        skip = len(self.initial_actions) + 1  # the user's first actions and the warm-up: every example's
        actions = tuple(self.session.actions[skip:])
        self._closing = True
        super().teardown()  # type: ignore[misc]
        guide = type(self).guide
        if guide is not None:
            guide.end(actions)
