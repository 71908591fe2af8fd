"""The controller base's handling of a failed sync: requeued with the work queue's rate limiter, and, for the
controllers whose upstream handleErr has a maxRetries, dropped after that many failures in a row."""

from __future__ import annotations

import pytest

from kmodel.component import Out
from kmodel.controllers.base import Controller
from kmodel.controllers.deployment import DeploymentController
from kmodel.controllers.endpoints import EndpointsController
from kmodel.controllers.endpointslice import EndpointSliceController
from kmodel.controllers.replicaset import ReplicaSetController


class AlwaysFails(Controller):
    service_account = "always-fails"

    def __init__(self, max_retries):
        self.max_retries = max_retries
        self.syncs = 0
        super().__init__("controller/always-fails", ["apiserver-0"])

    def sync(self, key, sync, now, out):
        self.syncs += 1
        sync.fail()


def syncs_until_quiet(controller: Controller, key: str, *, limit: int = 100) -> int:
    """Enqueue `key`, then work it and fire its back-off timer until nothing is waiting any more."""
    out = Out()
    controller.queue.add(key)
    for _ in range(limit):
        while controller.queue.has_work():
            controller.work(0, out)
        if not controller.queue.waiting:
            break
        ready = controller.queue.waiting[key]
        controller.queue.on_timer(ready, controller.queue.timer, out)
    return controller.syncs


def test_a_controller_with_max_retries_drops_the_key_after_that_many_failed_retries():
    c = AlwaysFails(max_retries=15)
    assert syncs_until_quiet(c, "default/web") == 16  # the first sync and 15 retries, as upstream's handleErr
    assert c.queue.num_requeues("default/web") == 0  # forgotten: the next event's failure backs off from 5 ms
    assert syncs_until_quiet(c, "default/web") == 32


def test_a_controller_without_max_retries_keeps_retrying():
    c = AlwaysFails(max_retries=None)
    assert syncs_until_quiet(c, "default/web", limit=40) == 40


@pytest.mark.parametrize("cls, expected", [(DeploymentController, 15), (EndpointsController, 15),
                                           (EndpointSliceController, 15), (ReplicaSetController, None)])
def test_max_retries_follow_upstream(cls, expected):
    assert cls.max_retries == expected


@pytest.mark.parametrize("cls", [DeploymentController, EndpointsController])
def test_the_retry_past_max_retries_fixes_keep_retrying_at_most_a_minute_apart_across_crashes(cls):
    from kmodel.controllers.base import RETRY_FIX_MAX_DELAY_MS

    upstream = cls(["apiserver-0"])
    assert upstream.max_retries == 15 and not upstream.retries_for_good
    assert upstream.queue.rate_limiter.max_ms == 1_000_000  # DefaultControllerRateLimiter's cap
    fixed = cls(["apiserver-0"], retry_past_max_retries=True)
    assert fixed.max_retries is None and cls.max_retries == 15  # the instance only, not the class
    for _ in range(2):  # a crash makes a new queue: it keeps the fix's back-off
        limiter = fixed.queue.rate_limiter
        assert limiter.max_ms == RETRY_FIX_MAX_DELAY_MS
        assert [limiter.when("k") for _ in range(18)][-3:] == [RETRY_FIX_MAX_DELAY_MS] * 3
        fixed.crash()
