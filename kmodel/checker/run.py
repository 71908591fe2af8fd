"""Running a checking campaign: the machine under Hypothesis, with a seed, a profile and a budget.

`run_campaign(options)` builds a subclass of the machine bound to this campaign (its cluster configuration,
variant, a fresh `Stats` and a sink for failing sessions), seeds it (`hypothesis.seed`: the same seed and
options explore the same examples in the same order, in any process), and runs it with
`run_state_machine_as_test` under the profile's settings, with `--examples` and `--steps` overriding the
profile's budget. Hypothesis shrinks a failure and runs the shrunk example last, so the last `Session` the
sink received is the minimal one; it becomes a `Trace` expecting that invariant to fail, which
`kmodel.checker.minimize` then cuts further (whole actions out, by replay) and simplifies the arguments of the
actions it keeps. With `keep_going` (`kmodel check --keep-going`) Hypothesis never hears of a violation: the
machine hands each violating example to the sink and the campaign runs its whole budget; then each distinct
violation is minimized by replay (kmodel.checker.findings) and the result lists them all in `findings`.

The pytest plugin (kmodel.pytest_plugin) runs a user's machine through the same function, with the machine's
own cluster configuration and the settings pytest chose; a machine that adds components of its own is
minimized the same way, each replay building fresh copies of them (`KmodelMachine.replay_components`).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional

import attrs
from hypothesis import seed as hypothesis_seed
from hypothesis import settings as Settings
from hypothesis.reporting import with_reporter
from hypothesis.stateful import run_state_machine_as_test

from kmodel.checker.machine import KmodelMachine, LongWaits
from kmodel.checker.own_crd_actions import own_kinds
from kmodel.checker.minimize import minimize_trace
from kmodel.checker.profiles import LONG_WAIT_PROFILES, profile
from kmodel.checker.session import VARIANTS, InvariantViolation, Session, with_component_invariants
from kmodel.checker.stats import Stats
from kmodel.checker.findings import Seen, minimize_findings
from kmodel.checker.guided import Guide, guided_bases
from kmodel.checker.trace import ShrinkRecord, Trace, Violation
from kmodel.checker.topology import COUNTS, ELECTING_COUNTS, check_draws, profile_draws
from kmodel.cluster import ClusterConfig, DEFAULT_COMPONENTS
from kmodel.cluster.config import check_election
from kmodel.fixes import check_fixes
from kmodel.checker.leader_rules import LeaderRules
from kmodel.checker.own_crd_rules import OwnCrdRules


@attrs.frozen
class CheckOptions:
    examples: Optional[int] = None  # None: the profile's
    steps: Optional[int] = None  # None: the profile's
    seed: Optional[int] = 0  # None: unseeded, Hypothesis' own randomness (the pytest plugin without --kmodel-seed)
    nodes: int = 3
    apiservers: int = 2  # two replicas, so one can lag behind the other (stale reads)
    variant: str = "default"
    #: kube-controller-managers and kube-schedulers
    controller_managers: int = 1
    schedulers: int = 1
    #: --leader-elect: every copy elects (ClusterConfig.leader_elect); False only with one of each
    leader_elect: bool = True
    profile: str = "dev"
    #: fixes of upstream bugs turned on (kmodel.fixes), each once, in the registry's order
    fixes: tuple[str, ...] = attrs.field(default=(), converter=check_fixes)
    #: components the cluster runs besides the default ones (kmodel.component.registry: import paths of yours)
    components: tuple[str, ...] = ()
    #: a violation ends its example, not the campaign: the whole budget is explored and every distinct violation
    #: reported (kmodel.checker.findings)
    keep_going: bool = False
    #: a guided campaign (kmodel.checker.guided): examples that took new branch outcomes are kept in a corpus
    #: and later examples start from them
    guided: bool = False
    #: the counts each example draws, from 1 to 3 (kmodel.checker.topology.COUNTS), in place of the fixed
    #: counts above. None: the profile's (campaign: every count, but those set to other than their default and,
    #: without leader election, the electing ones; dev and ci: none); `kmodel check` passes the campaign's
    #: minus the counts given on the command line
    drawn: Optional[tuple[str, ...]] = attrs.field(default=None, converter=attrs.converters.optional(tuple))

    def __attrs_post_init__(self) -> None:
        profile(self.profile)  # ValueError for an unknown one
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown variant {self.variant!r}; variants: {', '.join(VARIANTS)}")
        for name in ("examples", "steps"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"--{name} must be at least 1")
        if not 1 <= self.nodes <= 200:
            raise ValueError("--nodes must be between 1 and 200")
        if not 1 <= self.apiservers <= 9:
            raise ValueError("--apiservers must be between 1 and 9")
        for name in ("controller_managers", "schedulers"):
            if not 1 <= getattr(self, name) <= 5:
                raise ValueError(f"--{name.replace('_', '-')} must be between 1 and 5")
        check_election(self.controller_managers, self.schedulers, self.leader_elect)
        if self.drawn is not None:
            check_draws(self.drawn, self.leader_elect)

    def draws(self) -> tuple[str, ...]:
        """The topology counts each example draws (see `drawn`), in COUNTS order."""
        if self.drawn is not None:
            return check_draws(self.drawn, self.leader_elect)
        defaults = {f.name: f.default for f in attrs.fields(CheckOptions)}
        pinned = [count for count in COUNTS if getattr(self, count) != defaults[count]]
        return profile_draws(self.profile, self.leader_elect, pinned)

    def config(self) -> ClusterConfig:
        return ClusterConfig(nodes=self.nodes, apiservers=self.apiservers, seed=self.seed or 0, variant=self.variant,
                             fixes=self.fixes, controller_managers=self.controller_managers,
                             schedulers=self.schedulers, leader_elect=self.leader_elect,
                             components=tuple(dict.fromkeys([*DEFAULT_COMPONENTS, *self.components])))

    def settings(self) -> Settings:
        base = profile(self.profile)
        overrides = {}
        if self.examples is not None:
            overrides["max_examples"] = self.examples
        if self.steps is not None:
            overrides["stateful_step_count"] = self.steps
        return Settings(base, **overrides)


@attrs.define
class CampaignResult:
    options: CheckOptions
    stats: Stats
    seconds: float
    failure: Optional[Trace] = None  # the shrunk failing trace
    shrink: Optional[ShrinkRecord] = None  # how `failure` was shrunk
    sometimes: tuple = ()  # the sometimes properties the machine counted (stats.reached says how often)
    #: the machine explored (its invariants and components are what a replay of `failure` needs)
    machine: type[KmodelMachine] = KmodelMachine
    #: the Hypothesis settings it ran under (None: the options' own)
    settings: Optional[Settings] = None
    #: the cluster configuration it explored (None: the options' own)
    config: Optional[ClusterConfig] = None
    #: its `stop` ended it before its budget (another worker of a parallel run found a violation)
    stopped: bool = False
    #: with keep_going: the distinct violations (kmodel.checker.findings.Finding), the first also in `failure`
    findings: tuple = ()
    #: a guided campaign's figures (kmodel.checker.guided.GuidedFigures); None for a plain one
    guided: Any = None

    def invariant_list(self) -> list:
        """The invariants the campaign checked: its machine's, and those of the components its cluster ran."""
        config = self.config or self.options.config()
        return with_component_invariants(self.machine.invariant_list(), config.components)

    @property
    def examples(self) -> int:
        return (self.settings or self.options.settings()).max_examples

    @property
    def steps(self) -> int:
        return (self.settings or self.options.settings()).stateful_step_count


class CampaignStopped(KeyboardInterrupt):
    """Raised as an example starts when the campaign's `stop` says so. A KeyboardInterrupt, the one exception
    Hypothesis' engine treats as an interruption: it lets it through at once, without recording the example
    (any other would be a failure to shrink and to save in the example database)."""


def trace_of(session: Session) -> Trace:
    v = session.violation
    assert v is not None
    return Trace(session.config, tuple(session.actions), session.variant, {"fail": v.invariant},
                 Violation(v.invariant, v.message, v.step), boot_revision=session.boot_revision)


#: successful shrinks before Hypothesis stops shrinking (its own default is 500; each attempt replays a
#: whole example with a cluster, and a liveness failure's runs a whole failing settle, so the checker keeps
#: the budget small: `minimize` then cuts whole actions by replay, which does most of the work for less). A
#: count, not a time: the shrunk trace stays a function of the seed. A small count costs little: the traces
#: it leaves are as short, or one action longer, once minimized.
MAX_SHRINKS = 10
#: model events Hypothesis' shrinking may run, all its examples together, in place of its own limit of five
#: minutes (MAX_SHRINKING_SECONDS): a time, so a slower or busier machine stopped sooner and reported a longer
#: trace and another trace_digest for the same seed. Events are what an example costs (a failing settle's
#: replay runs tens of thousands, a passing example a few hundred), so this is minutes of shrinking, counted.
MAX_SHRINK_EVENTS = 6_000_000


class _EventsDeadline(float):
    """Hypothesis' shrinking deadline, counted in model events instead of seconds.

    When shrinking starts, the engine sets its deadline to `perf_counter() + MAX_SHRINKING_SECONDS`, and after
    each example it stops once `deadline < perf_counter()`. Put in place of MAX_SHRINKING_SECONDS, this float
    takes part in both: the sum is itself (a float subclass's reflected `+` goes first), noting the events run
    so far, and it is "before now" once `limit` more have run. Anywhere else it is a float of 10^9 seconds, so
    a Hypothesis that used the value another way would get no time limit rather than an error."""

    def __new__(cls, stats: Stats, limit: int) -> "_EventsDeadline":
        deadline = super().__new__(cls, 1e9)
        deadline.stats, deadline.limit, deadline.started = stats, limit, None
        return deadline

    def __radd__(self, now: float) -> "_EventsDeadline":
        self.started = self.stats.shrink_started_at_events = self.stats.events
        return self

    def __lt__(self, now: float) -> bool:
        spent = self.started is not None and self.stats.events - self.started >= self.limit
        if spent:
            self.stats.shrink_budget_reached = True
        return spent


@contextmanager
def shrink_limits(stats: Stats) -> Iterator[None]:
    """Bound Hypothesis' shrinking by counts only: at most MAX_SHRINKS successful shrinks and MAX_SHRINK_EVENTS model events run while shrinking (counted in `stats`), never
    by its five minutes, so the shrunk example is a function of the seed on any machine. Both hooks are private,
    hence guarded: with a Hypothesis that lacks one, its own limit stays."""
    from hypothesis.internal.conjecture import engine

    saved = {name: getattr(engine, name) for name in ("MAX_SHRINKS", "MAX_SHRINKING_SECONDS")
             if isinstance(getattr(engine, name, None), (int, float))}
    if "MAX_SHRINKS" in saved:
        engine.MAX_SHRINKS = MAX_SHRINKS
    if "MAX_SHRINKING_SECONDS" in saved:
        engine.MAX_SHRINKING_SECONDS = _EventsDeadline(stats, MAX_SHRINK_EVENTS)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(engine, name, value)


@contextmanager
def no_source_constants() -> Iterator[None]:
    """Keep Hypothesis from drawing constants it harvested from source code while a campaign runs.

    Hypothesis (6.131 and later) now and then draws, instead of a random value, a constant it read out of
    every "local" module (one outside site-packages and the standard library) loaded at that moment: kmodel's
    own modules in an editable install, none in a regular one, the user's own in both. Campaigns then drew
    differently depending on how kmodel was installed, which modules the entry point had imported
    (`kmodel check` and `run_campaign` with the same options could explore different examples and end on
    different traces) and on every string literal and
    every integer literal outside -100..100 anywhere in the source, so a change that altered no behaviour
    could still change a campaign.
    With the pool empty, what a seed explores depends on the seed, the options, Hypothesis' version and the
    model's behaviour only. Hypothesis' own fixed constants (its GLOBAL_CONSTANTS) are still drawn. The hook
    is private: with a Hypothesis that lacks it, this does nothing."""
    try:
        from hypothesis.internal.conjecture import providers  # private, hence guarded
    except ImportError:
        yield
        return

    harvest = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if harvest is None or not hasattr(providers, "Constants"):
        yield
        return
    empty = providers.Constants()

    def clear_cache() -> None:  # it holds the permitted constants per kind of draw, local ones included
        inner = getattr(cache, "cache", None)
        if inner is not None:
            inner.clear()

    providers._get_local_constants = lambda: empty
    clear_cache()
    try:
        yield
    finally:
        providers._get_local_constants = harvest
        clear_cache()


#: the cyclic garbage collector's thresholds while a campaign runs (Python's defaults: 700, 10, 10)
CAMPAIGN_GC_THRESHOLDS = (100_000, 10, 10)


@contextmanager
def campaign_gc() -> Iterator[None]:
    """Collect cyclic garbage less often while a campaign runs. Every example allocates a whole cluster that
    lives for its ~30 steps and dies as one cyclic graph; with the default 700-allocation threshold its
    objects are traced over and over, promoted, and found dead only by full collections (a sixth of a
    campaign's time). A larger first threshold lets most of it die young: a finished example's session is
    disposed of (`Session.dispose` breaks its cycles), so most of what a young collection would trace dies
    by reference counting before the next one. 100,000 allocations
    spend half the time collecting that 20,000 did, for the same peak memory. Only timing changes: nothing
    in the model observes the collector (no finalizers, no weak references to model objects)."""
    import gc

    old = gc.get_threshold()
    gc.set_threshold(*CAMPAIGN_GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*old)


def profile_bases(machine: type[KmodelMachine], profile_name: str, *, elects: bool = False,
                  own_crds: bool = False) -> tuple[type, ...]:
    """The bases of the class a profile runs `machine` as: long runs (LONG_WAIT_PROFILES) add LongWaits' rules
    (wait_long, lose_node) and its settle bound, unless the machine sets its own bound (its own class comes
    first); a cluster with a standby to take a lease over (`elects`: ClusterConfig.has_standbys, or examples that draw
    how many copies run: kmodel.checker.topology) adds LeaderRules'
    pause; one whose components bring CRDs of their own (`own_crds`) adds OwnCrdRules' rules on their objects."""
    if profile_name in LONG_WAIT_PROFILES and not issubclass(machine, LongWaits):
        bases: tuple[type, ...] = (LongWaits,) if machine is KmodelMachine else (machine, LongWaits)
    else:
        bases = (machine,)
    if elects:
        bases = (*bases, LeaderRules)
    if own_crds:
        bases = (*bases, OwnCrdRules)
    return bases


def run_campaign(options: CheckOptions, *, machine: type[KmodelMachine] = KmodelMachine,
                 on_example: Optional[Callable[[Stats], None]] = None,
                 on_replay: Optional[Callable[[int, int, int], None]] = None,
                 config: Optional[ClusterConfig] = None, settings: Optional[Settings] = None,
                 stop: Optional[Callable[[Stats], bool]] = None) -> CampaignResult:
    """Explore `machine` with `options`; a failure comes back shrunk and minimized in `failure`. `on_example` is
    called as each example starts, `on_replay` after each of minimization's replays (see `minimize`).
    `config` (default: `options.config()`) and `settings` (default: `options.settings()`) replace what the
    options say: the pytest plugin runs a machine's own configuration under the settings pytest chose.
    `stop`, asked as each example starts until this campaign has seen a violation, ends the campaign there
    when it answers true (`result.stopped`; a parallel run's worker stops when another found a violation)."""
    stats = Stats()
    stats.on_example = on_example
    if stop is not None:
        def started(stats: Stats) -> None:
            if stats.first_failure_at is None and stop(stats):
                stats.examples -= 1  # this one never ran
                raise CampaignStopped
            if on_example is not None:
                on_example(stats)

        stats.on_example = started
    failed: list[Session] = []

    def keep_last(session: Session) -> None:
        # Only the last failing session is reported (the shrunk one). The ones before it are disposed: the
        # traceback Hypothesis keeps of each failure it shrinks from still reaches its session, and a failing
        # campaign example (100 steps and a settle that ran to its 600 s bound) is a large cluster; kept, they
        # took a failing campaign past 3 GiB.
        for earlier in failed:
            if earlier is not session:
                earlier.dispose()
        failed[:] = [session]

    seen: list = []  # keep_going: every example that ended on a violation, as a findings.Seen

    def keep_each(session: Session) -> None:

        seen.append(Seen(stats.examples, trace_of(session)))  # the machine disposes of the session

    config = options.config() if config is None else config
    draws = options.draws()
    elects = config.has_standbys or bool(set(draws) & set(ELECTING_COUNTS))
    own_crds = bool(own_kinds(config.components))
    fields = {"config": config, "variant": options.variant, "stats": stats,
              "sink": staticmethod(keep_each if options.keep_going else keep_last)}
    if draws:
        fields["drawn_counts"] = draws
    if machine is KmodelMachine:  # the built-in campaign draws a static pod; a machine of one's own keeps its own
        fields["draws_static_pods"] = True
    if options.keep_going:
        fields["keep_going"] = True
    bases = profile_bases(machine, options.profile, elects=elects, own_crds=own_crds)
    run_settings = options.settings() if settings is None else settings
    guide = None
    if options.guided:
        guide = Guide(options.components, run_settings.database)
        bases, fields["guide"] = guided_bases(bases), guide
    bound = type("CheckMachine", bases, fields)
    if options.seed is not None:
        bound = hypothesis_seed(options.seed)(bound)
    # a machine's own components are rebuilt, fresh, for each replay of minimization (those its configuration
    # names are rebuilt from the trace's configuration anyway)
    own = machine.replay_components if machine.has_own_components() else None
    started = time.perf_counter()
    result = CampaignResult(options, stats, 0.0, sometimes=tuple(bound.sometimes_list()), machine=machine,
                            settings=settings, config=config)
    try:
        with with_reporter(lambda text: None), shrink_limits(stats), campaign_gc(), \
                no_source_constants():
            # our own replay tells the story; Hypothesis stays quiet
            if guide is None:
                run_state_machine_as_test(bound, settings=run_settings)
            else:  # in rounds, each its own Hypothesis run (kmodel.checker.guided)
                guide.explore(bound, run_settings, options.seed)
    except CampaignStopped:
        result.stopped = True
    except InvariantViolation:
        if not failed:
            raise
        # Hypothesis' shrink, then cutting whole actions out of what it left and simplifying the arguments of
        # those kept (kmodel.checker.minimize)
        shrunk = trace_of(failed[-1])
        found_in, examples = stats.first_failure_at or 0, stats.shrinking_examples()
        events = stats.shrinking_events()
        minimized = minimize_trace(shrunk, keep_prefix=len(machine.initial_actions) + 1,
                                   invariants=result.invariant_list(), on_replay=on_replay, components=own)
        result.failure = minimized.trace
        result.shrink = ShrinkRecord(found_in, examples, events, MAX_SHRINK_EVENTS, stats.shrink_budget_reached,
                                     len(shrunk.actions), minimized.replays, minimized.replays_budget,
                                     len(result.failure.actions), minimized.simplified)
    if seen:

        result.findings = minimize_findings(seen, keep_prefix=len(machine.initial_actions) + 1,
                                            invariants=result.invariant_list(), components=own,
                                            on_replay=on_replay)
        result.failure, result.shrink = result.findings[0].trace, result.findings[0].shrink
    result.seconds = time.perf_counter() - started
    result.guided = guide.figures if guide is not None else None
    return result
