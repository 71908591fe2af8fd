"""`kmodel check`'s progress bar: exploring, then shrinking and minimizing a violation, each against its budget,
with the time elapsed and an estimate of what is left, never counting past a total."""

from __future__ import annotations

from kmodel.checker.command import _Progress, clock_text
from kmodel.checker.run import MAX_SHRINK_EVENTS
from kmodel.checker.stats import Stats


def last_line(capsys) -> str:
    return capsys.readouterr().err.split("\r")[-1].rstrip()


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_bar_follows_exploring_then_shrinking_then_minimizing(capsys):
    clock = Clock()
    stats, bar = Stats(), _Progress(200, clock=clock)
    stats.on_example = bar
    for _ in range(50):
        stats.example_started()
        stats.example_finished("d", 1_000)
        clock.now += 0.5
    stats.example_started()  # the 51st starts 25 s in: 50 examples took 25 s, 150 more take about 75 s
    assert last_line(capsys) == ("[" + "#" * 7 + "." * 23 + "] 51/200 examples, 0 steps, 0 failing"
                                 " · 0:25 elapsed, ~1:13 left")
    stats.failed()  # the 51st example fails
    stats.example_finished("d", 0)
    stats.shrink_started_at_events = stats.events  # Hypothesis' shrink begins (run.shrink_limits marks it)
    stats.example_started()
    for _ in range(10):
        clock.now += 3
        stats.example_finished("d", MAX_SHRINK_EVENTS // 20)
        stats.example_started()
    # half the events in 30 s: at most 30 s more
    assert last_line(capsys) == ("[" + "#" * 15 + "." * 15 + "] shrinking a violation: 11 examples, "
                                 f"{MAX_SHRINK_EVENTS // 2:,} of at most {MAX_SHRINK_EVENTS:,} events"
                                 " · 0:55 elapsed, at most ~0:30 left")
    bar.replayed(0, 120, 20)
    clock.now += 60
    bar.replayed(30, 120, 9)
    assert last_line(capsys) == ("[" + "#" * 7 + "." * 23 + "] minimizing it: 30 of at most 120 replays, "
                                 "9 actions left · 1:55 elapsed, at most ~3:00 left")


def test_no_count_goes_past_its_total(capsys):
    clock = Clock()
    stats, bar = Stats(), _Progress(3, clock=clock)
    stats.on_example = bar
    for _ in range(5):  # Hypothesis may run more examples than its budget (invalid ones count here)
        clock.now += 1
        stats.example_started()
        stats.example_finished("d", 10)
    line = last_line(capsys)
    assert line.startswith("[" + "#" * 30 + "] 3/3 examples") and "left" not in line
    stats.failed()
    stats.shrink_started_at_events = stats.events
    stats.example_started()
    stats.example_finished("d", MAX_SHRINK_EVENTS + 5_000)  # the example that spent the budget goes past it
    stats.example_started()
    assert f"{MAX_SHRINK_EVENTS:,} of at most {MAX_SHRINK_EVENTS:,} events" in last_line(capsys)
    bar.replayed(130, 120, 4)
    assert "120 of at most 120 replays" in last_line(capsys)


def test_clock_text():
    assert [clock_text(s) for s in (0, 59.4, 61, 3599, 3600, 7322)] == [
        "0:00", "0:59", "1:01", "59:59", "1:00:00", "2:02:02"]


def test_a_parallel_run_counts_the_examples_of_every_worker(capsys):
    from kmodel.checker.parallel import Progress

    clock = Clock()
    bar = _Progress(100, clock=clock, workers=2)
    bar.parallel(Progress(0, 0, 0))
    clock.now += 20
    bar.parallel(Progress(40, 900, 1))  # 40 of 100 examples in 20 s: 60 more take about 30 s
    assert last_line(capsys) == ("[" + "#" * 12 + "." * 18 + "] 40/100 examples on 2 workers, 900 steps, 1 failing"
                                 " · 0:20 elapsed, ~0:30 left")
