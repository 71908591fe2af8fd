"""Server-side apply and field managers (Kubernetes 1.31: k8s.io/apimachinery/pkg/util/managedfields over
sigs.k8s.io/structured-merge-diff/v4).

    schema.py     how an object is walked: structs, maps, associative/set/atomic lists (built-in kinds, CRDs)
    fieldpath.py  paths, field sets, FieldsV1, comparing two objects
    merge.py      an applied configuration merged over the live object; removing fields no one owns
    managers.py   managedFields entries; how an Apply or an Update moves ownership; conflicts
    writes.py     what the API server's pipeline calls on its writes
"""
