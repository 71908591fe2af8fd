"""Full messages compared with what Kubernetes prints (strings taken from upstream tests and kubectl output)."""

from kmodel.objects import (
    DecodeError, ErrorType, FieldError, GoValue, decode, invalid_message, invalid_message_for, invalid_status, validate,
)
from kmodel.objects.field_errors import go_quote, invalid, not_supported, required

from .test_invalid_objects import deployment, pod, service, with_container


def first_message(body):
    obj = decode(body)
    if isinstance(obj, DecodeError):
        return obj.message
    return invalid_message_for(obj, validate(obj))


def test_negative_replicas_message():
    assert first_message(deployment(replicas=-1)) == (
        'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0')


def test_selector_mismatch_message():
    assert first_message(deployment(selector={"matchLabels": {"app": "other"}})) == (
        'Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: '
        'map[string]string{"app":"web"}: `selector` does not match template `labels`')


def test_a_selector_that_does_not_convert_leaves_the_template_unchecked():
    """ValidateDeploymentSpec (release-1.31) checks the template only under a selector LabelSelectorAsSelector
    accepts; for one it refuses it adds "invalid label selector" instead, so no mismatch and no pod errors."""
    body = deployment(selector={"matchExpressions": [{"key": "app", "operator": "In"}]})
    body["spec"]["template"]["spec"]["containers"][0]["image"] = ""  # a template error that goes unreported
    assert first_message(body) == (
        'Deployment.apps "web" is invalid: [spec.selector.matchExpressions[0].values: Required value: must be '
        "specified when `operator` is 'In' or 'NotIn', spec.selector: Invalid value: v1.LabelSelector{MatchLabels:"
        'map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{'
        'Key:"app", Operator:"In", Values:[]string(nil)}}}: invalid label selector]')
    assert first_message(deployment(selector={"matchExpressions": [
        {"key": "app", "operator": "Equals", "values": ["web"]}]})).endswith(": invalid label selector]")
    assert "invalid label selector" not in first_message(
        deployment(selector={"matchExpressions": [{"key": "app", "operator": "Exists"}]}, replicas=-1))


def test_strict_decoding_messages():
    assert first_message(deployment(replicass=3)) == (
        'Deployment in version "v1" cannot be handled as a Deployment: '
        'strict decoding error: unknown field "spec.replicass"')
    body = deployment(replicass=3)
    body["spec"]["template"]["spec"]["containers"][0]["imagee"] = "x"
    err = decode(body)
    # Reported in document order (replicass was added after template).
    assert err.cause == ('strict decoding error: unknown field "spec.template.spec.containers[0].imagee", '
                         'unknown field "spec.replicass"')
    assert err.fields == ("spec.template.spec.containers[0].imagee", "spec.replicass")
    assert decode(deployment(replicass=3), strict=False).spec.replicas == 2


def test_type_error_message_names_go_struct_field():
    assert first_message(deployment(replicas="three")) == (
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go '
        'struct field DeploymentSpec.spec.replicas of type int32')
    msg = first_message(with_container(ports=[{"containerPort": "80"}]))
    assert msg.endswith("json: cannot unmarshal string into Go struct field "
                        "ContainerPort.spec.containers.ports.containerPort of type int32")


def test_type_error_wins_over_unknown_fields():
    err = decode(deployment(replicas="three", replicass=3))
    assert "cannot unmarshal string" in err.message and err.field == "spec.replicas"


def test_quantity_decode_message():
    assert first_message(with_container(resources={"requests": {"cpu": "lots"}})) == (
        'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression '
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def test_unknown_kind():
    err = decode({"apiVersion": "v1", "kind": "Pad"})
    assert err.message == 'no matches for kind "Pad" in version "v1"' and err.code == 404


def test_name_messages():
    body = deployment()
    body["metadata"]["name"] = "Web_1"
    assert first_message(body) == (
        'Deployment.apps "Web_1" is invalid: metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain '
        "must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
    svc = service()
    svc["metadata"]["name"] = "1svc"
    assert first_message(svc) == (
        'Service "1svc" is invalid: metadata.name: Invalid value: "1svc": a DNS-1035 label must consist of lower '
        "case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric "
        "character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")


def test_several_errors_are_bracketed_and_deduplicated():
    errs = [required("spec.containers[0].name"), required("spec.containers[0].image"),
            required("spec.containers[0].image")]
    assert invalid_message("Pod", "p", errs) == (
        'Pod "p" is invalid: [spec.containers[0].name: Required value, spec.containers[0].image: Required value]')


def test_duplicate_container_and_port_messages():
    msg = first_message(pod({"containers": [{"name": "c", "image": "a"}, {"name": "c", "image": "b"}]}))
    assert msg == 'Pod "p" is invalid: spec.containers[1].name: Duplicate value: "c"'
    msg = first_message(with_container(ports=[{"containerPort": 70000}]))
    assert msg == ('Pod "p" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 70000: '
                   'must be between 1 and 65535, inclusive')


def test_a_containers_errors_come_in_upstreams_order():
    """validateContainers (release-1.31): the checks common to every container (name, image, ports, resources),
    then the name's uniqueness, then the probes."""
    msg = first_message(pod({"containers": [
        {"name": "c", "image": "a", "livenessProbe": {"periodSeconds": 5},
         "resources": {"requests": {"example.com/dongle": "1"}, "limits": {"example.com/dongle": "2"}}},
        {"name": "c"}, {"name": "", "image": "b"}, {"name": "", "image": "b"}]}))
    assert msg == (
        'Pod "p" is invalid: [spec.containers[0].resources.requests: Invalid value: "1": must be equal to '
        'example.com/dongle limit of 2, spec.containers[0].livenessProbe: Required value: must specify a handler '
        'type, spec.containers[1].image: Required value, spec.containers[1].name: Duplicate value: "c", '
        'spec.containers[2].name: Required value, spec.containers[3].name: Required value, '
        'spec.containers[3].name: Duplicate value: ""]')


def test_owner_reference_errors_name_the_list_and_each_second_controller():
    """ValidateOwnerReferences: a reference's errors under metadata.ownerReferences (no index), and one error for
    each controller after the first, naming the first and it."""
    refs = [{"apiVersion": "", "kind": "", "name": "", "uid": ""},
            {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "u1", "controller": True},
            {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api", "uid": "u2", "controller": True},
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u3", "controller": True}]
    msg = first_message(pod(ownerReferences=refs))
    value = ('[]v1.OwnerReference{v1.OwnerReference{APIVersion:"", Kind:"", Name:"", UID:"", ...}, '
             'v1.OwnerReference{APIVersion:"apps/v1", Kind:"Deployment", Name:"web", UID:"u1", ...}, '
             'v1.OwnerReference{APIVersion:"apps/v1", Kind:"Deployment", Name:"api", UID:"u2", ...}, '
             'v1.OwnerReference{APIVersion:"apps/v1", Kind:"ReplicaSet", Name:"rs", UID:"u3", ...}}')
    assert msg == (
        'Pod "p" is invalid: [metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty, '
        'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty, '
        'metadata.ownerReferences.name: Invalid value: "": name must not be empty, '
        'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty, '
        f'metadata.ownerReferences: Invalid value: {value}: Only one reference can have Controller set to true. '
        'Found "true" in references for Deployment/web and Deployment/api, '
        f'metadata.ownerReferences: Invalid value: {value}: Only one reference can have Controller set to true. '
        'Found "true" in references for Deployment/web and ReplicaSet/rs]')


def test_only_a_valid_port_name_is_a_duplicate():
    """validateContainerPorts: an invalid name gets its own errors and is not looked for among the others."""
    msg = first_message(with_container(ports=[{"name": "Web", "containerPort": 80}, {"name": "Web", "containerPort": 81},
                                              {"name": "web", "containerPort": 82}, {"name": "web", "containerPort": 83}]))
    assert msg.count("Duplicate value") == 1 and 'ports[3].name: Duplicate value: "web"' in msg, msg


def test_an_endpoints_address_is_checked_as_validate_endpoint_address_does():
    """validateEndpointAddress: the syntax, the hostname, then ValidateNonSpecialIP, which refuses an address
    that does not parse a second time, in its own words."""
    body = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "e", "namespace": "default"},
            "subsets": [{"addresses": [{"ip": "10.0.0", "hostname": "Web_1"}, {"ip": "::"}]}]}
    msg = first_message(body)
    assert msg.startswith(
        'Endpoints "e" is invalid: [subsets[0].addresses[0].ip: Invalid value: "10.0.0": must be a valid IP address, '
        '(e.g. 10.9.8.7 or 2001:db8::ffff), subsets[0].addresses[0].hostname: Invalid value: "Web_1": ')
    assert msg.endswith(
        'subsets[0].addresses[0].ip: Invalid value: "10.0.0": must be a valid IP address, '
        'subsets[0].addresses[1].ip: Invalid value: "::": may not be unspecified (::)]')


def test_protocol_and_request_messages():
    assert first_message(with_container(ports=[{"containerPort": 80, "protocol": "HTTP"}])) == (
        'Pod "p" is invalid: spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": '
        'supported values: "SCTP", "TCP", "UDP"')
    assert first_message(with_container(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})) == (
        'Pod "p" is invalid: spec.containers[0].resources.requests: Invalid value: "2": '
        'must be less than or equal to cpu limit of 1')


def test_error_body_value_printing():
    assert str(invalid("f", 3, "d")) == "f: Invalid value: 3: d"
    assert str(invalid("f", True, "d")) == "f: Invalid value: true: d"
    assert str(invalid("f", None, "d")) == "f: Invalid value: null: d"
    assert str(invalid("f", GoValue("x.Y{}"), "d")) == "f: Invalid value: x.Y{}: d"
    assert go_quote('a"b\n') == '"a\\"b\\n"'
    assert str(not_supported("f", "x", ["a", "b"])) == 'f: Unsupported value: "x": supported values: "a", "b"'
    assert FieldError(ErrorType.FORBIDDEN, "f", "v", "no").body() == "Forbidden: no"


def test_invalid_status_shape():
    status = invalid_status("apps", "Deployment", "web", [invalid("spec.replicas", -1, "must be greater than or equal to 0")])
    assert status["code"] == 422 and status["reason"] == "Invalid"
    assert status["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "spec.replicas",
                                            "message": "Invalid value: -1: must be greater than or equal to 0"}]


def test_field_paths_of_nested_errors_name_go_path_and_indexed_path():
    """The codec writes a field's paths only on an error; both shapes stay Go's (struct keys) and ours (indexes)."""
    from kmodel.objects.codec import DecodeError, decode, load_struct
    from kmodel.objects.core import ObjectMeta

    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"},
            "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"spec": {"containers": [
                {"name": "c", "image": "i", "ports": [{"containerPort": "x"}], "imagee": 1}]}}}}
    e = decode(body)
    assert e.cause == ("json: cannot unmarshal string into Go struct field "
                       "ContainerPort.spec.template.spec.containers.ports.containerPort of type int32")
    assert e.field == "spec.template.spec.containers[0].ports[0].containerPort"
    body["metadata"]["labels"] = {"a": 1}
    e = decode(body)
    assert e.cause == "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"
    assert e.field == "metadata.labels[a]"
    body["metadata"]["labels"] = {"a": "b"}
    body["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = 80
    e = decode(body)
    assert e.fields == ("spec.template.spec.containers[0].imagee",)
    try:
        load_struct(ObjectMeta, {"creationTimestamp": 5}, path="metadata")
    except DecodeError as x:
        assert x.message == ("json: cannot unmarshal number into Go struct field "
                             "ObjectMeta.metadata.creationTimestamp of type string")
        assert x.field == "metadata.creationTimestamp"
    else:
        raise AssertionError("a number where a time belongs decodes")
