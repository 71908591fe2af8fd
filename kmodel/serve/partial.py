"""Metadata-only answers: PartialObjectMetadata and PartialObjectMetadataList (meta.k8s.io/v1), what a client
gets when it asks ``Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`` (client-go's
metadata client, controller-runtime's metadata informers, the garbage collector): each object's kind, apiVersion
and metadata only, and a list's own metadata (resourceVersion, continue, remainingItemCount), as
k8s.io/apiserver/pkg/endpoints/handlers/response.go's asPartialObjectMetadata[List] shape them."""

from __future__ import annotations

from typing import Any, Mapping

API_VERSION = "meta.k8s.io/v1"


def partial_object(doc: Mapping[str, Any]) -> dict:
    """The PartialObjectMetadata of an object's JSON."""
    return {"kind": "PartialObjectMetadata", "apiVersion": API_VERSION, "metadata": doc.get("metadata", {})}


def partial_list(page: Mapping[str, Any]) -> dict:
    """The PartialObjectMetadataList of a list answer's JSON (a `<Kind>List` page)."""
    return {"kind": "PartialObjectMetadataList", "apiVersion": API_VERSION, "metadata": page["metadata"],
            "items": [partial_object(doc) for doc in page["items"]]}
