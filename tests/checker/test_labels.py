"""The labels of the report's arrows (kmodel.checker.labels): a reply names the request it answers, and a watch
event names its object by the API's resource name, never the kind with an "s" added."""

from __future__ import annotations

from kmodel.apiserver.wire import Request, Response, Status, WatchEvent
from kmodel.checker.labels import MessageLabels
from kmodel.network.message import Message
from kmodel.objects.core import Endpoints, Pod
from kmodel.objects.meta import ObjectMeta


def test_a_reply_names_the_request_it_answers():
    labels = MessageLabels()
    pod = Pod(metadata=ObjectMeta(name="web-1", namespace="default"))
    assert labels(Message(1, "kubectl", "apiserver-0", Request(7, "create", "pods", "default", body=pod))) == \
        "create pods web-1"
    assert labels(Message(2, "kubelet/node-1", "apiserver-0",
                          Request(7, "update", "nodes", name="node-1", subresource="status"))) == \
        "update nodes/status node-1"
    # the same request id from two clients: each reply is matched to its own client's request
    conflict = Response(7, 409, Status(409, "Conflict", "the object has been modified"))
    assert labels(Message(3, "apiserver-0", "kubelet/node-1", conflict)) == "409 Conflict (update nodes/status node-1)"
    assert labels(Message(4, "apiserver-0", "kubectl", Response(7, 201, pod))) == "201 (create pods web-1)"
    # a reply to a request that was not seen (recorded before the tap) says its code alone
    assert labels(Message(5, "apiserver-0", "kubectl", Response(8, 200))) == "200"


def test_a_watch_event_names_its_object_by_the_resource_the_api_serves():
    labels = MessageLabels()
    web = Endpoints(metadata=ObjectMeta(name="web", namespace="default"))
    watch = Request(3, "watch", "endpoints")
    assert labels(Message(1, "proxy/node-1", "apiserver-0", watch, stream="w1")) == "watch endpoints"
    assert labels(Message(2, "apiserver-0", "proxy/node-1", WatchEvent("ADDED", web), stream="w1")) == \
        "WatchEvent ADDED endpoints/web"
    # an event on a stream whose watch was not seen: the served resource of the object's class
    assert labels(Message(3, "apiserver-0", "controller/endpoints", WatchEvent("MODIFIED", web), stream="w9")) == \
        "WatchEvent MODIFIED endpoints/web"
    assert labels(Message(4, "apiserver-0", "proxy/node-1", Response(3, 200), stream="w1")) == "200 (watch endpoints)"
