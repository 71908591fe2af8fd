"""kmodel.proxy: kube-proxy, one per node, as a sans-IO component.

- rules:     Services + EndpointSlices -> the table {"<clusterIP>:<port>": ["<ip>:<port>", ...]} (pure).
- component: the KubeProxy component (informers on services and endpointslices) and the cluster's `make`.
"""

from kmodel.proxy.rules import endpoint_string, service_rules

__all__ = ["endpoint_string", "service_rules"]
