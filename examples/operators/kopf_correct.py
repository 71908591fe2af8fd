"""A kopf operator, written as kopf's users write them: a Website (kopf.yaml) is served from a ConfigMap holding its
content, named in the Website's status.

It survives a crash between its two writes (the ConfigMap, then kopf's patch of the Website's status): the
ConfigMap's name comes from the Website's (`<name>-content`), so a handler run again after a crash finds it
(409 AlreadyExists) and updates it instead of making a second one. The ConfigMap is owned by the Website, so the
garbage collector removes it with the Website.

    kmodel check --operator "kopf run --standalone examples/operators/kopf_correct.py" \\
        --operator-manifests examples/operators/kopf.yaml
"""

import kopf
import kubernetes


def _api() -> kubernetes.client.CoreV1Api:
    return kubernetes.client.CoreV1Api()


@kopf.on.login()
def login(**kwargs):
    return kopf.login_via_client(**kwargs)


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    settings.posting.enabled = False  # no Events: the checker's invariants read the objects
    kubernetes.config.load_kube_config()


@kopf.on.create("web.example.com", "v1", "websites", backoff=1)
@kopf.on.update("web.example.com", "v1", "websites", backoff=1)
@kopf.on.resume("web.example.com", "v1", "websites", backoff=1)
def serve(body, spec, name, namespace, patch, **_):
    config_map = {"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": f"{name}-content", "labels": {"web.example.com/website": name}},
                  "data": {"content": spec["content"]}}
    kopf.adopt(config_map, owner=body)
    try:
        _api().create_namespaced_config_map(namespace, config_map)
    except kubernetes.client.ApiException as exc:
        if exc.status != 409:
            raise
        _api().patch_namespaced_config_map(f"{name}-content", namespace, {"data": config_map["data"]})
    patch.status["configMap"] = f"{name}-content"
