"""The experiments on the anti-pattern variants (the table of them is kmodel.variants, low in the layers).

    page.py      `kmodel principles`: every variant checked against several seeds, reports/principles.md
    costs.py     what watching saves: API traffic and reaction delays of watch versus the `polling` variant
    command.py   the `kmodel variants` and `kmodel principles` subcommands

They run whole clusters and the checker, so they sit above both; the places a variant changes the model are
where the variant's `where` says (the client, a controller, the scheduler, kmodel/etcdctl.py).
"""
