"""Episode start-up of `kmodel check --operator`: serving a fresh cluster until the operator's CRDs are
Established, then starting the operator until it is ready, as each episode does (kmodel.operator.episode).

Run: python benchmarks/bench_operator_startup.py [--episodes N] [--operator kopf|client]

Each run is an episode with no actions and no settle: it prints each episode's serve and operator-ready seconds,
then their medians and the worst start-up. Wall-clock figures: run it on a quiet machine; no assertions.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kmodel.operator.episode import EpisodeOptions, run_episode  # noqa: E402
from kmodel.operator.spec import operator_spec  # noqa: E402

OPERATORS = {
    "kopf": ("kopf run --standalone examples/operators/kopf_correct.py", "examples/operators/kopf.yaml"),
    "client": ("python examples/operators/client_correct.py", "examples/operators/client.yaml"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--operator", choices=sorted(OPERATORS), default="kopf")
    args = parser.parse_args()
    os.chdir(ROOT)  # the operators' commands name their files from the repository's root
    command, manifests = OPERATORS[args.operator]
    spec = operator_spec(command, [manifests], None, "watch", [])
    serve, ready = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(args.episodes):
            result = run_episode(spec, [], EpisodeOptions(settle_s=0.0), Path(tmp) / f"{number:03d}")
            serve.append(result.serve_s)
            ready.append(result.ready_s)
            print(f"episode {number + 1}: serve {result.serve_s:.2f} s + operator ready {result.ready_s:.2f} s")
    totals = [s + r for s, r in zip(serve, ready)]
    print(f"{args.operator}: start-up median {statistics.median(totals):.2f} s, max {max(totals):.2f} s (serve "
          f"median {statistics.median(serve):.2f} s, operator ready median {statistics.median(ready):.2f} s) "
          f"over {args.episodes} episodes")


if __name__ == "__main__":
    main()
