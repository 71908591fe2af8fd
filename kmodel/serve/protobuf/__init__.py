"""Protobuf request bodies (``application/vnd.kubernetes.protobuf``) of the built-in kinds.

Theory of operation
-------------------
client-go's typed clients (kubectl's ``create <kind>`` generators, ``drain``'s deletes) send their bodies as
protobuf. A body is `MAGIC` (``k8s\\x00``) followed by a runtime.Unknown message whose typeMeta names the object's
apiVersion and kind and whose raw is the object's own message (k8s.io/apimachinery/pkg/runtime/serializer/
protobuf, release-1.31): `kmodel.serve.protobuf.wire` takes it apart. The messages are upstream's generated.proto
definitions (`kmodel.serve.protobuf.messages`, built from the vendored descriptors), and
`kmodel.serve.protobuf.tojson` turns a decoded message into the JSON object the server would have got from the same
object sent as JSON, following Kubernetes' JSON mapping (the Go types' JSON tags), not protobuf's own.

The server decodes such a body into that dict and goes on as for a JSON body; it never answers in protobuf.
"""

from kmodel.serve.protobuf.wire import MEDIA_TYPE, decode

__all__ = ["MEDIA_TYPE", "decode"]
