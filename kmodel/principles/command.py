"""The `kmodel variants` subcommand: the anti-pattern variants, what each changes and where."""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

from kmodel.errors import KmodelUsageError
from kmodel.variants import VARIANTS

HELP = "list the model's variants: the real design and the anti-patterns the checker must catch"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("variants", help=HELP, description=HELP,
                              epilog="use one with --variant NAME on check, replay and simulate")
    p.set_defaults(handler=variants_command)


def variants_command(args: argparse.Namespace) -> int:
    width = max(len(v.name) for v in VARIANTS)
    for v in VARIANTS:
        expect = ", ".join(v.expect) if v.expect else "nothing violated (it costs more)"
        if v.name == "default":
            expect = "nothing violated"
        print(f"{v.name.ljust(width)}  {v.principle}")
        indent = " " * (width + 2)
        for line in textwrap.wrap(f"changes: {v.changes}", 100 - len(indent)):
            print(indent + line)
        if v.where != "-":
            print(f"{indent}where:   {v.where}")
        print(f"{indent}expect:  {expect}")
    return 0


PRINCIPLES_HELP = "regenerate reports/principles.md: each anti-pattern variant against 5 seeds, and watch vs polling"


def register_principles(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "principles", help=PRINCIPLES_HELP, description=PRINCIPLES_HELP,
        epilog="exit codes: 0 every anti-pattern caught on at least 4 seeds and the default passing; 1 otherwise; "
               "2 bad usage")
    p.add_argument("--seeds", default="1,2,3,4,5", metavar="S,S,…", help="seeds (default 1,2,3,4,5)")
    p.add_argument("--variants", default=None, metavar="NAME,…", help="only these variants (default: all)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="runs at once (default 1: each run timed alone)")
    p.add_argument("--out", default="reports/principles.md", metavar="FILE", help="the page (default %(default)s)")
    p.add_argument("--cost-nodes", default="10,100,1000", metavar="N,N,…",
                   help="cluster sizes for watch vs polling (default 10,100,1000; 'none' to skip)")
    p.set_defaults(handler=principles_command)


def _ints(text: str, option: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise KmodelUsageError(f"{option} must be comma-separated whole numbers, e.g. 1,2,3 (got {text!r})") from None
    if not values or min(values) < 0:
        raise KmodelUsageError(f"{option} needs at least one number >= 0 (got {text!r})")
    return values


def principles_command(args: Any) -> int:
    import sys
    from pathlib import Path

    from kmodel.variants import variant
    from kmodel.principles.page import run_all, write_page

    seeds = _ints(args.seeds, "--seeds")
    try:
        chosen = VARIANTS if args.variants is None else tuple(
            variant(n.strip()) for n in args.variants.split(",") if n.strip())
    except ValueError as exc:
        raise KmodelUsageError(str(exc)) from None
    if args.jobs < 1:
        raise KmodelUsageError("--jobs must be at least 1")
    cost_nodes = [] if args.cost_nodes.strip().lower() == "none" else _ints(args.cost_nodes, "--cost-nodes")
    out = Path(args.out)
    work = out.parent / "principles-runs"

    def progress(run: Any) -> None:
        what = run.invariant or run.error or "no violation"
        print(f"  {run.variant:20s} seed {run.seed}: {what} ({run.seconds:.1f} s"
              f"{f', {run.actions} actions' if run.actions else ''})", flush=True)

    print(f"kmodel principles: {len(chosen)} variants x {len(seeds)} seeds")
    runs = run_all(chosen, seeds, work, jobs=args.jobs, on_run=progress)
    costs_md, plot_line = costs_section(cost_nodes, out)
    problems = write_page(out, runs, costs_md, plot_line, seeds)
    print(f"wrote {out}")
    for p in problems:
        print(f"PROBLEM {p}", file=sys.stderr)
    return 1 if problems else 0


def costs_section(cost_nodes: list[int], out: Path) -> tuple[str, str]:
    """The watch-versus-polling table and the line that shows its plot (drawn beside the page), or says why
    there is none."""
    if not cost_nodes:
        return "Not measured (--cost-nodes none).\n", ""
    from kmodel.principles import costs

    print(f"  watch vs polling at {', '.join(map(str, cost_nodes))} nodes …", flush=True)
    rows = costs.measure(cost_nodes)
    png = out.parent / "principles" / "watch-vs-polling.png"
    png.parent.mkdir(parents=True, exist_ok=True)
    if costs.plot_png(rows, str(png)):
        return costs.table_markdown(rows), f"![watch versus polling](principles/{png.name})\n"
    return costs.table_markdown(rows), f"(No plot: {costs.plot_unavailable() or 'it could not be drawn'}.)\n"
