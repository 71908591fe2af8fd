"""Reading the store's history: a run's invariants share one reader, and each feed sees exactly the changes
under its prefixes that a reader of its own would show, with the same mirror lookups."""

from __future__ import annotations

from pathlib import Path

from kmodel.invariants._history import NODES, PODS, HistoryReader, change_feed
from kmodel.invariants.registry import SHARED
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Delete, Scale
from kmodel.objects import load_yaml

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "web-service.yaml"
PREFIXES = (("",), (PODS,), (NODES, PODS))


def test_feeds_over_one_shared_reader_see_what_private_readers_see():
    cluster = Cluster(ClusterConfig(nodes=2))
    shared: dict = {}
    feeds = {p: change_feed({SHARED: shared}, p) for p in PREFIXES}
    private = {p: HistoryReader(p) for p in PREFIXES}
    got: dict = {p: [] for p in PREFIXES}
    want: dict = {p: [] for p in PREFIXES}

    def read_all() -> None:
        for p in PREFIXES:
            got[p].extend(feeds[p].read(cluster.store))
            want[p].extend(private[p].read(cluster.store))

    cluster.apply(load_yaml(EXAMPLE.read_text()))
    for command in (Scale("deployments", "default", "web", 4), Delete("services", "default", "web"),
                    Scale("deployments", "default", "web", 0)):
        cluster.run_for(20_000)
        read_all()
        cluster.submit(command)
    cluster.run_for(20_000)
    read_all()
    assert len(shared) == 1  # one reader behind the three feeds
    for p in PREFIXES:
        assert got[p] == want[p] and got[p]
        assert all(ch.key.startswith(p) for ch in got[p])
    pods = {ch.key for ch in want[(PODS,)]}
    for key in sorted(pods) + [NODES + "node-1", "/registry/services/specs/default/web"]:
        assert feeds[(PODS,)].value(key) == private[("",)].value(key)
    assert not feeds[("",)].read(cluster.store) and not feeds[("",)].has_news(cluster.store)


def test_a_feed_without_the_shared_dict_reads_on_its_own():
    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run_for(5_000)
    mine, other = change_feed({}, (NODES,)), change_feed({}, (NODES,))
    assert mine.shared is not other.shared
    changes = mine.read(cluster.store)
    assert changes and all(ch.key == NODES + "node-1" for ch in changes)
    assert other.read(cluster.store) == changes
