"""kmodel.client: how every component reaches the cluster, and nothing else.

A component embeds these objects and forwards to them the inputs they own:

* `ApiClient` (api_client.py): requests with stable ids and continuations, deadlines, failover between
  API server replicas, watches on streams, delayed continuations.
* `Informer` (informer.py): list + watch into an `Indexer` (indexer.py), with add/update/delete handlers,
  never going back to an older resourceVersion; `SharedInformerFactory` (shared_informer.py): one informer per
  resource and selectors for every component of a process.
* `WorkQueue` (workqueue.py): client-go's deduplicating FIFO with delayed and rate-limited adds.
* `retry_on_conflict` (retry.py): RetryOnConflict with DefaultRetry, as continuations.
* `ClientComponent` (component.py): a Component base that hands its peers' news (a stream closed, a peer's
  connections reset, a message refused) to its ApiClient.
"""

from kmodel.client.api_client import ApiClient, client_timeout, connection_lost
from kmodel.client.component import ClientComponent
from kmodel.client.indexer import (
    NAMESPACE_INDEX, NODE_NAME_INDEX, OWNER_UID_INDEX, DeletedFinalStateUnknown, Indexer, index_by_namespace,
    index_by_node_name, index_by_owner_uid, meta_namespace_key,
)
from kmodel.client.informer import Informer
from kmodel.client.retry import RetryOnConflict, is_conflict, retry_on_conflict
from kmodel.client.workqueue import ItemExponentialFailureRateLimiter, WorkQueue

__all__ = [
    "ApiClient", "ClientComponent", "DeletedFinalStateUnknown", "Indexer", "Informer", "ItemExponentialFailureRateLimiter",
    "NAMESPACE_INDEX", "NODE_NAME_INDEX", "OWNER_UID_INDEX", "RetryOnConflict", "WorkQueue", "client_timeout", "connection_lost",
    "index_by_namespace", "index_by_node_name", "index_by_owner_uid", "is_conflict", "meta_namespace_key",
    "retry_on_conflict",
]
