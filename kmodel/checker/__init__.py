"""The checker: a Hypothesis state machine that explores the cluster, traces, replay and campaigns.

    actions.py   every choice as data (attrs values with a readable name and JSON)
    session.py   one cluster, the actions executed on it, the invariants checked after each, the digest
    snapshot.py  copies of a warmed-up session, so a campaign builds and warms its cluster once
    machine.py   the RuleBasedStateMachine: draws choices, turns them into actions (nothing else)
    trace.py     the trace file format (kmodel-trace/2; reads /1 too)
    replay.py    re-executing a trace without Hypothesis
    stats.py     what a campaign counts
    run.py       a campaign: seed, profile, budget
    results.py   report.json, traces and the human reports
    profiles.py  Hypothesis profiles dev, ci, campaign
    command.py   `kmodel check`, `kmodel replay`, `kmodel invariants`
"""
