"""The loop: enabled events, `step(event)`, `run_fair()`, and the running digest. See `kmodel.loop.loop`."""

from kmodel.loop.events import (
    EVENT_KINDS,
    FAULT_EVENTS,
    PROGRESS_EVENTS,
    AdvanceTime,
    BreakStream,
    Crash,
    DelayHead,
    Deliver,
    DropHead,
    LoopEvent,
    FailRequest,
    FireTimer,
    Heal,
    HealAll,
    Partition,
    ReleaseAll,
    Restart,
    SlowLink,
    Work,
    event_from_json,
    is_fault,
)
from kmodel.loop.loop import EventNotEnabled, Loop

__all__ = [
    "AdvanceTime", "BreakStream", "Crash", "DelayHead", "Deliver", "DropHead", "EVENT_KINDS", "LoopEvent", "FailRequest",
    "EventNotEnabled", "FAULT_EVENTS", "FireTimer", "Heal", "HealAll", "Loop", "PROGRESS_EVENTS",
    "Partition", "ReleaseAll", "Restart", "SlowLink", "Work", "event_from_json", "is_fault",
]
