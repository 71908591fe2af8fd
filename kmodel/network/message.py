"""A message in flight: what a link carries from one endpoint to another.

A message is created only by `Network.send`, which gives it the next value of a counter as its `id`, so
ids are stable across runs (never `id()`), unique for the life of the network, and increase in send order.
`payload` is whatever the sender passed (the network never looks inside it). `stream` is an optional
stream id: a string naming a long-lived exchange (an HTTP/2 stream such as a watch) whose messages flow in
both directions over the two links between its two endpoints.

Messages are shared, never copied: treat every field as read-only.
"""

from __future__ import annotations

from typing import Any, Optional

import attrs


# Not frozen: a frozen attrs class costs about twice as much to create, and one message is created per
# send on the hot path. Nothing in kmodel mutates a message after `Network.send` builds it.
@attrs.define(slots=True, eq=False, repr=True)
class Message:
    id: int
    src: str
    dst: str
    payload: Any
    stream: Optional[str] = None
