"""Field sets, FieldsV1 and ownership moves (kmodel/apiserver/apply/fieldpath.py, managers.py), on cases from
structured-merge-diff's and upstream's fieldmanager tests."""

from __future__ import annotations

from kmodel.apiserver.apply import managers
from kmodel.apiserver.apply.fieldpath import from_fields_v1, path_string, to_fields_v1, walk
from kmodel.apiserver.apply.managers import Entry, Scope
from kmodel.apiserver.apply.schema import builtin_shape
from kmodel.objects import Pod, Service

POD = Scope(builtin_shape(Pod), "v1", "", True)
SERVICE = builtin_shape(Service)


def pod(**spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "finalizers": ["a"]},
            "spec": {"containers": [{"name": "c", "image": "i", "args": ["x"]}], **spec}}


def test_field_sets_follow_the_schema_list_types() -> None:
    members = walk(pod(), builtin_shape(Pod))[1]
    assert (("f", "metadata"), ("f", "finalizers"), ("v", '"a"')) in members  # a set list: by value
    container = (("f", "spec"), ("f", "containers"), ("k", '{"name":"c"}'))
    assert container in members and container + (("f", "args"),) in members  # args: atomic
    assert container + (("f", "args"), ("i", 0)) not in members
    assert (("f", "spec"),) not in members  # a struct field with children is not itself a member


def test_service_ports_are_keyed_by_port_and_defaulted_protocol() -> None:
    svc = {"spec": {"ports": [{"port": 80}, {"port": 53, "protocol": "UDP"}]}}
    members = walk(svc, SERVICE)[1]
    assert (("f", "spec"), ("f", "ports"), ("k", '{"port":80,"protocol":"TCP"}')) in members
    assert (("f", "spec"), ("f", "ports"), ("k", '{"port":53,"protocol":"UDP"}')) in members


def test_fields_v1_round_trips_and_marks_members_with_children() -> None:
    paths = walk(pod(), builtin_shape(Pod))[1]
    encoded = to_fields_v1(paths)
    assert encoded["f:spec"]["f:containers"]['k:{"name":"c"}'] == {".": {}, "f:args": {}, "f:image": {},
                                                                    "f:name": {}}
    assert from_fields_v1(encoded) == frozenset(paths)


def test_paths_print_as_upstream_prints_them() -> None:
    assert path_string((("f", "spec"), ("f", "containers"), ("k", '{"name":"c"}'), ("f", "image"))) == \
        '.spec.containers[name="c"].image'
    assert path_string((("f", "metadata"), ("f", "finalizers"), ("v", '"a"'))) == '.metadata.finalizers[="a"]'
    assert path_string((("f", "spec"), ("f", "ports"), ("k", '{"port":80,"protocol":"TCP"}'))) == \
        '.spec.ports[port=80,protocol="TCP"]'


def test_an_update_removes_deleted_fields_from_every_manager() -> None:
    live = pod(nodeName="n1")
    entries = managers.update([], None, live, "creator", POD, 1000)
    new = pod()
    after = managers.update(entries, live, new, "editor", POD, 2000)
    assert [e.manager for e in after] == ["creator"]  # editor removed a field only: it takes nothing
    assert (("f", "spec"), ("f", "nodeName")) not in after[0].fields


def test_main_resource_updates_ignore_status_and_stripped_metadata() -> None:
    live = pod()
    new = dict(pod(), status={"phase": "Running"}, metadata={"name": "p", "finalizers": ["a"], "uid": "u"})
    assert managers.update([], live, new, "m", POD, 1) == []


def test_entries_are_ordered_apply_first_then_by_time_and_manager() -> None:
    f = frozenset({(("f", "spec"),)})
    entries = [Entry("b", "Update", "v1", f, 5000), Entry("z", "Apply", "v1", f, 9000),
               Entry("a", "Update", "v1", f, 5500)]
    assert [e.manager for e in managers.ordered(entries)] == ["z", "a", "b"]  # 5000 and 5500 ms: the same second


def test_managed_fields_decode_what_they_encode() -> None:
    entries = managers.update([], None, pod(), "m", POD, 3000)
    assert managers.decode(managers.encode(entries)) == entries
