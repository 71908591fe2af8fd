"""Errors raised by the IPAM allocators.

Every allocator error carries, as its message, the exact text the upstream component returns, so that a model
trace reads like a real cluster's logs and events. Each module subclasses IPAMError for its own failures; callers
that only care that "the allocation failed" can catch IPAMError.
"""

from __future__ import annotations


class IPAMError(Exception):
    """Base class of every allocator failure; str(error) is the upstream error text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message
