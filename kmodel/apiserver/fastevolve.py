"""`evolve(obj, **changes)`: attrs.evolve for the pipeline's hot path (it lives in kmodel.objects, which
defaulting uses too; re-exported here for the API server's modules)."""

from kmodel.objects.fastevolve import evolve

__all__ = ["evolve"]
