"""`kmodel simulate`: real manifests on a fresh model cluster, run fairly, reported as a user sees it."""
