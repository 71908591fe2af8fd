"""client-go work queue semantics."""

from __future__ import annotations

from kmodel.client import ItemExponentialFailureRateLimiter, WorkQueue
from kmodel.component import Out, SetTimer


def test_one_entry_per_key_in_fifo_order():
    q = WorkQueue()
    for key in ("a", "b", "a", "c", "b"):
        q.add(key)
    assert [q.get(), q.get(), q.get(), q.get()] == ["a", "b", "c", None]


def test_a_key_added_while_processing_is_requeued_once_after_done():
    q = WorkQueue()
    q.add("a")
    assert q.get() == "a"
    q.add("a")
    q.add("a")
    assert len(q) == 0  # not handed to a second worker while the first holds it
    q.add("b")
    q.done("a")
    assert [q.get(), q.get(), q.get()] == ["b", "a", None]


def test_done_without_re_add_drops_the_key():
    q = WorkQueue()
    q.add("a")
    q.done(q.get())
    assert q.get() is None and not q.has_work()


def test_exponential_per_item_backoff_is_5ms_doubling_capped_at_1000s():
    rl = ItemExponentialFailureRateLimiter()
    assert [rl.when("k") for _ in range(5)] == [5, 10, 20, 40, 80]
    assert rl.when("other") == 5
    for _ in range(30):
        last = rl.when("k")
    assert last == 1_000_000
    rl.forget("k")
    assert rl.when("k") == 5 and rl.num_requeues("k") == 1


def test_rate_limited_adds_wait_on_the_queue_timer():
    q = WorkQueue("ctl")
    out = Out()
    q.add_rate_limited(100, out, "a")  # ready at 105
    q.add_rate_limited(100, out, "a")  # 10 ms now, but the earlier ready time is kept
    q.add_after(100, out, "b", 50)
    assert [e for e in out.effects if isinstance(e, SetTimer)] == [SetTimer("ctl/delay", None, 105)]
    assert q.get() is None
    out = Out()
    assert q.on_timer(105, "ctl/delay", out)
    assert q.get() == "a" and q.get() is None
    assert out.effects == [SetTimer("ctl/delay", None, 150)]
    assert not q.on_timer(150, "something-else", Out())
    q.on_timer(150, "ctl/delay", Out())
    assert q.get() == "b"
    assert q.num_requeues("a") == 2


def test_rate_limited_adds_also_wait_for_the_queues_overall_bucket_of_100_at_10_a_second():
    # DefaultControllerRateLimiter: the longer of the key's own back-off and a token of one bucket per queue
    q = WorkQueue()
    out = Out()
    for i in range(103):
        q.add_rate_limited(0, out, f"k{i}")
    assert {q.waiting[f"k{i}"] for i in range(100)} == {5}  # the burst: each key's own first back-off
    assert [q.waiting[f"k{i}"] for i in (100, 101, 102)] == [100, 200, 300]  # then one token per 100 ms
    # a key's own back-off still wins when it is the longer wait (13th failure: 5 ms × 2^12, with tokens to spare)
    q2 = WorkQueue()
    for n in range(12):
        q2.add_rate_limited(0, out, "slow")
        q2.waiting.clear()
    q2.add_rate_limited(0, out, "slow")
    assert q2.waiting["slow"] == 5 * 2 ** 12
