"""client-go's retry.RetryOnConflict with retry.DefaultRetry, in continuation style.

`retry_on_conflict(client, now, out, resource=, namespace=, name=, mutate=, on_done=)` reads the object
(a consistent GET), asks `mutate(obj)` for the new object (None: nothing to change, and `on_done` gets
None), and sends the update. A 409 whose reason is Conflict (not AlreadyExists: upstream's
errors.IsConflict) waits `duration_ms` (DefaultRetry: 10 ms, factor 1) and starts again from the GET; at
most `steps` attempts (DefaultRetry: 5) in all, after which `on_done` gets the last 409. Any other answer
ends the loop and goes to `on_done(now, response, out)`.

`current` skips the first GET (the caller already holds the object, e.g. from its informer), as callers of
RetryOnConflict usually start from a lister and re-GET only after a conflict.

Not modelled: DefaultRetry's 10 % jitter, up to 1 ms on its 10 ms, under the model's 1 ms resolution.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from kmodel.apiserver.wire import Response
from kmodel.client.api_client import ApiClient
from kmodel.component import Out

DEFAULT_RETRY_STEPS = 5
DEFAULT_RETRY_DURATION_MS = 10


def is_conflict(response: Response) -> bool:
    body = response.body
    return response.code == 409 and getattr(body, "reason", "") == "Conflict"


class RetryOnConflict:
    """One retry loop in progress (see the module docstring)."""

    def __init__(self, client: ApiClient, *, resource: str, namespace: str, name: str,
                 mutate: Callable[[Any], Optional[Any]], on_done: Callable[[int, Optional[Response], Out], None],
                 subresource: str = "", steps: int = DEFAULT_RETRY_STEPS,
                 duration_ms: int = DEFAULT_RETRY_DURATION_MS) -> None:
        self.client = client
        self.resource, self.namespace, self.name, self.subresource = resource, namespace, name, subresource
        self.mutate = mutate
        self.on_done = on_done
        self.steps = steps
        self.duration_ms = duration_ms
        self.attempts = 0

    def start(self, now: int, out: Out, current: Any = None) -> None:
        if current is not None:
            self._attempt(now, out, current)
        else:
            self._read(now, out)

    def _read(self, now: int, out: Out) -> None:
        self.client.get(now, out, self.resource, self.name, namespace=self.namespace, on_done=self._on_read)

    def _on_read(self, now: int, response: Response, out: Out) -> None:
        if not response.ok:
            self.on_done(now, response, out)
            return
        self._attempt(now, out, response.body)

    def _attempt(self, now: int, out: Out, obj: Any) -> None:
        updated = self.mutate(obj)
        if updated is None:
            self.on_done(now, None, out)
            return
        self.attempts += 1
        self.client.update(now, out, self.resource, updated, subresource=self.subresource, on_done=self._on_update)

    def _on_update(self, now: int, response: Response, out: Out) -> None:
        if is_conflict(response) and self.attempts < self.steps:
            self.client.call_later(now, out, self.duration_ms, self._read)
            return
        self.on_done(now, response, out)


def retry_on_conflict(client: ApiClient, now: int, out: Out, *, resource: str, namespace: str, name: str,
                      mutate: Callable[[Any], Optional[Any]],
                      on_done: Callable[[int, Optional[Response], Out], None], subresource: str = "",
                      current: Any = None, steps: int = DEFAULT_RETRY_STEPS,
                      duration_ms: int = DEFAULT_RETRY_DURATION_MS) -> RetryOnConflict:
    loop = RetryOnConflict(client, resource=resource, namespace=namespace, name=name, mutate=mutate,
                           on_done=on_done, subresource=subresource, steps=steps, duration_ms=duration_ms)
    loop.start(now, out, current)
    return loop
