"""kmodel.apiserver: one API server replica's request pipeline and registry over kmodel/store.

Modules: wire (payloads), resources (resource table, etcd keys), selectors, authentication, authorization,
bootstrap_policy, admission/ (mutating and validating plugins), validation (decode + schema), strategy
(per-kind create/update preparation), clusterip, registry (store txns), pipeline (the stages in order),
audit, events. See pipeline.py for the theory of operation.
"""
