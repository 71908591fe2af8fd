"""Logical time in integer milliseconds, and timers owned by endpoints. See `kmodel.clock.clock`."""

from kmodel.clock.clock import Clock, TimerKey

__all__ = ["Clock", "TimerKey"]
