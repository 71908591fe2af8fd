"""The component pattern, with no loop at all: call the handlers by hand and read the effects."""

from kmodel.component import CancelTimer, Out, Send, SetTimer
from kmodel.component.example import CounterClient, CounterServer
from kmodel.network import Message


def msg(src, dst, payload, stream=None, id=1):
    return Message(id, src, dst, payload, stream)


def test_client_opens_a_watch_on_start():
    client = CounterClient("c", "server")
    out = Out()
    client.start(0, out)
    assert out.effects == [Send("server", ("watch",), "c#watch-1")]


def test_client_work_sends_a_request_and_arms_a_retry_timer_until_answered():
    client = CounterClient("c", "server", retry_ms=100)
    assert not client.has_work()
    client.enqueue(2)
    assert client.has_work()
    out = Out()
    client.work(0, out)
    assert out.effects == [Send("server", ("incr", "c", 1)), SetTimer("retry", delay_ms=100)]
    assert not client.has_work()  # one request at a time

    out = Out()
    client.on_timer(100, "retry", out)  # no answer yet: resend the same request
    assert out.effects == [Send("server", ("incr", "c", 1)), SetTimer("retry", delay_ms=100)]

    out = Out()
    client.on_message(150, msg("server", "c", ("ok", 1, 7)), out)
    assert out.effects == [CancelTimer("retry")]
    assert client.acked == [(1, 7)]
    assert client.has_work()


def test_server_applies_a_retried_request_once_and_answers_again():
    server = CounterServer("server")
    out = Out()
    server.on_message(0, msg("c", "server", ("incr", "c", 1)), out)
    server.on_message(5, msg("c", "server", ("incr", "c", 1)), out)
    assert server.value == 1
    assert out.effects == [Send("c", ("ok", 1, 1)), Send("c", ("ok", 1, 1))]


def test_server_pushes_changes_to_watchers_until_their_stream_closes():
    server = CounterServer("server")
    out = Out()
    server.on_message(0, msg("c", "server", ("watch",), stream="c#watch-1"), out)
    server.on_message(1, msg("d", "server", ("incr", "d", 1)), out)
    assert out.take() == [
        Send("c", ("value", 0), "c#watch-1"),
        Send("c", ("value", 1), "c#watch-1"),
        Send("d", ("ok", 1, 1)),
    ]
    server.on_stream_closed(2, "c#watch-1", out)
    server.on_message(3, msg("d", "server", ("incr", "d", 2)), out)
    assert out.effects == [Send("d", ("ok", 2, 2))]


def test_crash_keeps_disk_and_forgets_memory():
    server = CounterServer("server")
    out = Out()
    server.on_message(0, msg("c", "server", ("watch",), stream="c#w"), out)
    server.on_message(0, msg("c", "server", ("incr", "c", 1)), out)
    server.crash()
    assert server.value == 1 and server.applied == {"c": 1} and server.watches == {}

    client = CounterClient("c", "server")
    client.enqueue(1)
    client.work(0, Out())
    client.crash()
    assert client.next_req == 2  # request ids never repeat after a restart
    assert not client.has_work() and client.outstanding is None


def test_client_reopens_its_watch_one_retry_period_after_it_ends():
    client = CounterClient("c", "server", retry_ms=50)
    client.start(0, Out())
    out = Out()
    client.on_stream_closed(10, "c#watch-1", out)
    assert out.take() == [SetTimer("rewatch", delay_ms=50)]
    client.on_timer(60, "rewatch", out)
    assert out.effects == [Send("server", ("watch",), "c#watch-2")]
