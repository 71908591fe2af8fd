"""`kmodel check`'s progress bar: exploring, then shrinking and minimizing a violation, each against its budget."""

from __future__ import annotations

from kmodel.checker.command import _Progress
from kmodel.checker.run import MAX_SHRINK_EVENTS
from kmodel.checker.stats import Stats


def last_line(capsys) -> str:
    return capsys.readouterr().err.split("\r")[-1].rstrip()


def test_the_bar_follows_exploring_then_shrinking_then_minimizing(capsys):
    stats, bar = Stats(), _Progress(200)
    stats.on_example = bar
    for _ in range(50):
        stats.example_started()
        stats.example_finished("d", 1_000)
    assert last_line(capsys) == "[" + "#" * 7 + "." * 23 + "] 50/200 examples, 0 steps, 0 failing"
    stats.failed()  # the 50th example fails
    stats.example_finished("d", 0)
    stats.shrink_started_at_events = stats.events  # Hypothesis' shrink begins (run.shrink_limits marks it)
    for _ in range(10):
        stats.example_started()
        stats.example_finished("d", MAX_SHRINK_EVENTS // 20)
    stats.example_started()
    assert last_line(capsys) == ("[" + "#" * 15 + "." * 15 + "] shrinking a violation: 11 examples, "
                                 f"{MAX_SHRINK_EVENTS // 2:,} of at most {MAX_SHRINK_EVENTS:,} events")
    bar.replayed(30, 120, 9)
    assert last_line(capsys) == "[" + "#" * 7 + "." * 23 + "] minimizing it: 30 of at most 120 replays, 9 actions left"
