"""Two small operators written against the model's controller API, each with its CustomResourceDefinition: the
tenant operator (tenant.py), correct, and the backup operator (backup.py), with a bug of the kind operators ship.
Each joins a cluster by its registration; `docs/operators.md` shows how to check them."""
