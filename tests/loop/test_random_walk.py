"""Random walks over the loop's menus (progress events and faults), chosen by Hypothesis.

Properties that must hold on every walk: each link delivers in send order (FIFO); every listed event is
accepted by `step`; the server counts each request id once; replaying the walk's trace on a fresh loop
reproduces the digest and the state.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from kmodel.component.example import CounterClient, CounterServer
from kmodel.loop import DelayHead, Loop, Partition


class FifoCheckingServer(CounterServer):
    def __init__(self, name):
        super().__init__(name)
        self.last_id_from = {}
        self.counted = []  # (client, request id) of every increment applied

    def on_message(self, now, msg, out):
        assert msg.id > self.last_id_from.get(msg.src, 0), "link delivered out of send order"
        self.last_id_from[msg.src] = msg.id
        before = self.value
        super().on_message(now, msg, out)
        if self.value != before:
            self.counted.append((msg.payload[1], msg.payload[2]))


def build():
    server = FifoCheckingServer("server")
    clients = [CounterClient(f"c{i}", "server", retry_ms=30) for i in range(3)]
    loop = Loop(components=[server, *clients])
    for c in clients:
        c.enqueue(2)
        loop.notify_work(c.name)
    return loop, server, clients


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_random_walks_keep_fifo_count_once_and_replay(data):
    loop, server, clients = build()
    trace = []
    for _ in range(data.draw(st.integers(0, 80), label="steps")):
        menu = loop.enabled_events() + loop.enabled_faults()
        menu.append(Partition([data.draw(st.sampled_from(["server", "c0", "c1", "c2"]), label="cut")]))
        links = loop.network.nonempty_links()
        if links:
            src, dst = links[0]
            menu.append(DelayHead(src, dst, 25))
        event = data.draw(st.sampled_from(menu), label="event")
        loop.step(event)
        trace.append(event)

    assert len(set(server.counted)) == len(server.counted) == server.value  # retries count once
    for c in clients:
        assert [req for req, _ in c.acked] == sorted({req for req, _ in c.acked})

    replay, server2, clients2 = build()
    for event in trace:
        replay.step(event)
    assert replay.digest() == loop.digest()
    assert server2.value == server.value and [c.acked for c in clients2] == [c.acked for c in clients]
