"""v1 ConfigMap through the whole API pipeline: strict decoding, validation (keys, immutable), RBAC, namespace
lifecycle, and removal with its namespace."""

from __future__ import annotations

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply, Delete, Patch
from kmodel.objects import ConfigMap

COMPONENTS = ("namespace",)


def configmap(name: str = "settings", namespace: str = "default", **fields) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}, **fields}


def cluster() -> Cluster:
    return Cluster(ClusterConfig(nodes=1, components=COMPONENTS))


def last(c: Cluster):
    return c.kubectl.results[-1].response


def test_a_configmap_is_stored_under_its_etcd_key_with_data_and_binary_data():
    c = cluster()
    c.submit(Apply(configmap(data={"mode": "fast"}, binaryData={"blob": "aGVsbG8="})))
    c.run_for(2_000)
    assert last(c).code == 201
    cm = c.get("configmaps", "default", "settings")
    assert isinstance(cm, ConfigMap) and cm.data == {"mode": "fast"} and cm.binary_data == {"blob": "aGVsbG8="}
    assert [kv.key for kv in c.etcd.store.peek("/registry/configmaps/default/settings")] == \
        ["/registry/configmaps/default/settings"]


def test_an_immutable_configmaps_data_cannot_change_but_its_labels_can():
    c = cluster()
    c.submit(Apply(configmap(data={"mode": "fast"}, immutable=True)))
    c.submit(Patch("configmaps", "default", "settings", {"data": {"mode": "slow"}}))
    c.run_for(2_000)
    assert last(c).code == 422
    assert last(c).body.message == ('ConfigMap "settings" is invalid: data: Forbidden: field is immutable when '
                                    '`immutable` is set')
    c.submit(Patch("configmaps", "default", "settings", {"immutable": False}))
    c.run_for(2_000)
    assert last(c).code == 422 and "immutable: Forbidden: field is immutable when `immutable` is set" in \
        last(c).body.message
    c.submit(Patch("configmaps", "default", "settings", {"metadata": {"labels": {"tier": "web"}}}))
    c.run_for(2_000)
    assert last(c).code == 200
    assert c.get("configmaps", "default", "settings").metadata.labels == {"tier": "web"}


def test_a_mutable_configmap_can_be_edited_and_made_immutable():
    c = cluster()
    c.submit(Apply(configmap(data={"mode": "fast"})))
    c.submit(Patch("configmaps", "default", "settings", {"data": {"mode": "slow"}, "immutable": True}))
    c.run_for(2_000)
    cm = c.get("configmaps", "default", "settings")
    assert last(c).code == 200 and cm.data == {"mode": "slow"} and cm.immutable is True


def test_bad_keys_and_unknown_fields_are_refused():
    c = cluster()
    c.submit(Apply(configmap(data={"..hidden": "x", "ok": "y"}, binaryData={"ok": "eQ=="})))
    c.run_for(2_000)
    assert last(c).code == 422
    assert last(c).body.message == (
        'ConfigMap "settings" is invalid: [data[..hidden]: Invalid value: "..hidden": must not start with \'..\', '
        'data[ok]: Invalid value: "ok": duplicate of key present in binaryData]')
    c.submit(Apply(configmap(name="typo", dataa={"x": "y"})))
    c.run_for(2_000)
    assert last(c).code == 400 and 'unknown field "dataa"' in last(c).body.message
    assert c.get("configmaps", "default", "settings") is None and c.get("configmaps", "default", "typo") is None


def test_configmaps_go_with_their_namespace():
    c = cluster()
    c.submit(Apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}))
    c.submit(Apply(configmap(namespace="team", data={"a": "b"})))
    c.run_for(2_000)
    assert c.get("configmaps", "team", "settings") is not None
    c.submit(Delete("namespaces", "", "team"))
    c.run_for(1_000)
    c.submit(Apply(configmap(name="late", namespace="team")))
    c.run_for(60_000)
    assert last(c).code == 403 and "unable to create new content in namespace team" in last(c).body.message
    assert c.objects("configmaps", "team") == [] and c.get("namespaces", "", "team") is None
