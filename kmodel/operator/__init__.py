"""`kmodel check --operator CMD`: a real operator, unchanged, explored through faults over the served API.

Theory of operation
-------------------
Each example is an *episode*: a fresh served cluster (kmodel.serve.session, HTTPS, in this process), the
operator's manifests applied at boot (its CRDs, RBAC, config), then the operator started as a process of its own
with a kubeconfig holding its user only (`process`), and waited for until it is ready (`readiness`). The checker
then does the episode's drawn actions one by one (`actions`, drawn by `draws` from the CRDs' structural schemas):
user actions on the custom objects, faults on the operator (SIGKILL and restart, at its next write too;
SIGSTOP/SIGCONT; its connection cut; its next request answered with an error; its watches broken or expired) and
on the cluster. Every fault heals within its own action, so once the actions are done the operator gets a
settle's time, and the liveness invariants must hold by its end (`judge`).

An episode is real: the interleaving of the operator's process with the model is not deterministic. So a failing
episode is kept as its drawn actions and its served trace (every request as it entered, kmodel.serve.recording:
`kmodel replay` runs it again in-model to the recorded digest), re-run N times to say how often it recurs, and
minimized by removing actions while the violation still recurs in at least one of N runs (`campaign`). The
report puts the operator's requests and the cluster's answers beside the steps (`exchanges`, `report`).

Modules: `spec` (what the options name), `actions`, `draws`, `process`, `readiness`, `session` (one served
cluster and the hands acting on it), `judge`, `episode`, `exchanges`, `campaign`, `report`, `command`.
"""
