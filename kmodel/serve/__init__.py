"""`kmodel serve`: the model cluster behind kube-apiserver's REST API, for real clients (kubectl, client
libraries, operators).

Theory of operation
-------------------
Three parts, one job each:

* `runner.ModelThread` runs the model in real time on one thread, the only one that touches it;
* `gateway.Gateway` is a component on the model's network through which outside requests enter: each becomes a
  message from the endpoint "http-clients" to an API server replica, so partitions, crashes and request faults
  apply to it, and the replica's whole pipeline (authentication, RBAC, admission, validation) answers it;
* `http` is the HTTP server: its threads turn URLs, queries and bodies into the model's requests (`rest`), hand
  them over, wait, and write the answers as kube-apiserver's JSON (objects, lists, metav1.Status, watch streams,
  Tables for kubectl: `tables`); discovery comes from the model's resource table (`discovery`).

`session.ServeSession` puts them together; `command` is the CLI.
"""
