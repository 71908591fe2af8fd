"""What polling costs against watching: API requests, bytes and reaction delays, at several cluster sizes.

Run: python benchmarks/bench_polling.py [--nodes 10,100,1000] [--seconds 60] [--node-status-period S]
                                        [--png reports/polling-costs.png]

For each size, runs the default model (informers watch) and the `polling` variant (informers list every
10 s) over the same logical window after boot with the same workload (kmodel/principles/costs.py says what is
counted and how), prints one line per run as it finishes, then the Markdown table, and draws the PNG
(requests/s and bytes/s against nodes on log scales, and the delays) when matplotlib is installed
(`pip install 'kmodel[plot]'`). Counts are deterministic; wall times depend on the machine and its load.
No assertions.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kmodel.principles.costs import MODES, measure_one, plot_png, table_markdown  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="10,100,1000", help="comma-separated cluster sizes (default 10,100,1000)")
    parser.add_argument("--seconds", type=int, default=60, help="logical seconds measured after boot (default 60)")
    parser.add_argument("--node-status-period", type=float, default=None, metavar="S",
                        help="seconds between a kubelet's writes of an unchanged Node status (default: upstream's "
                             "300, nodeStatusReportFrequency; a changed status is written at the next 10-s sync)")
    parser.add_argument("--png", default="reports/polling-costs.png", help="where to draw the plot ('' for none)")
    args = parser.parse_args()
    sizes = [int(n) for n in args.nodes.split(",") if n.strip()]
    rows = []
    started = time.perf_counter()
    for n in sizes:
        for label, variant in MODES:
            row = measure_one(n, args.seconds, variant, node_status_ms=None if args.node_status_period is None
                              else int(args.node_status_period * 1000))
            rows.append(row)
            print(f"  {n:>5} nodes {label:<8} {row.requests_per_s:>9,.1f} req/s {row.bytes_per_s / 1024:>9,.1f} KiB/s "
                  f"{row.loop_events:>9,} events  {row.wall_s:6.1f} s wall ({row.cpu_s:.1f} s cpu)", flush=True)
    print(f"\nall runs: {time.perf_counter() - started:.1f} s wall\n")
    print(table_markdown(rows))
    if args.png:
        Path(args.png).parent.mkdir(parents=True, exist_ok=True)
        if plot_png(rows, args.png):
            print(f"\nplot: {args.png}")


if __name__ == "__main__":
    main()
