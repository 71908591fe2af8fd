"""The kopf operator of kopf_correct.py with one planted mistake, of Sieve's first class (an intermediate state
after a crash between two writes): the ConfigMap gets a generated name (`generateName`), and only kopf's patch of
the Website's status, a second write after the handler returns, remembers it. Killed between the two writes, the
operator finds on restart a Website whose status names no ConfigMap, runs the handler again and makes a second
ConfigMap: the invariant one-configmap-per-website (examples/operators/websites.py) fails.

    kmodel check --operator "kopf run --standalone examples/operators/kopf_buggy.py" \\
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
    settings.posting.enabled = False
    kubernetes.config.load_kube_config()


@kopf.on.create("web.example.com", "v1", "websites", backoff=1)
@kopf.on.update("web.example.com", "v1", "websites", backoff=1)
@kopf.on.resume("web.example.com", "v1", "websites", backoff=1)
def serve(body, spec, name, namespace, status, patch, **_):
    data = {"content": spec["content"]}
    made = status.get("configMap")
    if made:  # the ConfigMap it made before: update it
        _api().patch_namespaced_config_map(made, namespace, {"data": data})
        return
    config_map = {"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"generateName": f"{name}-", "labels": {"web.example.com/website": name}},
                  "data": data}
    kopf.adopt(config_map, owner=body)
    created = _api().create_namespaced_config_map(namespace, config_map)
    patch.status["configMap"] = created.metadata.name
