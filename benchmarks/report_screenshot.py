"""Open a check's report.html offline in headless Chromium: check that the diagram was drawn, and take screenshots.

    python benchmarks/report_screenshot.py [--seed 14] [--trace PATH] [--out DIR]

By default it runs `kmodel check --seed 14 --report DIR` (about a minute) and opens DIR/report.html; with
`--trace PATH` it replays that trace instead and writes the report from the replay (seconds). Chromium is told
to resolve no host and to use a proxy that does not exist, so the page gets nothing from a network: what it
draws, it drew from the report folder alone. It prints whether Mermaid drew every diagram (the page marks
`<body data-diagrams="drawn">`, and each diagram becomes an SVG) and writes two PNGs, 1,280 pixels wide:
DIR/report.png, the top of the page, and DIR/report-violations.png, the violations alone (a copy of the page,
report-violations.html, with the other sections hidden). Exit 0 when every diagram was drawn, 1 when not, 2 when no Chromium is installed.

Chromium: `apt-get install -y chromium` (Debian), or any chromium / google-chrome on PATH.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
#: flags that keep the page off any network and let Mermaid's asynchronous drawing finish before the dump
OFFLINE = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--proxy-server=127.0.0.1:9",
           "--host-resolver-rules=MAP * ~NOTFOUND", "--virtual-time-budget=20000")


def find_chromium() -> Optional[str]:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


def report_from_trace(trace_path: Path, folder: Path) -> Path:
    """Write folder/report.{md,html} (and Mermaid beside them) from a trace, as `kmodel check` writes them."""
    sys.path.insert(0, str(ROOT))
    from kmodel.checker.replay import replay
    from kmodel.checker.results import violation_story
    from kmodel.checker.trace import read_trace
    from kmodel.report import write_reports

    trace = read_trace(trace_path)
    replayed = replay(trace, record_changes=True)
    story = violation_story(trace, replayed, str(trace_path), f"kmodel replay {trace_path}")
    report = {"seed": trace.config.seed, "variant": trace.variant,
              "violations": [{"invariant": story.invariant, "message": story.message, "trace": str(trace_path),
                              "steps": len(trace.actions)}]}
    write_reports(report, [story], folder)
    return folder / "report.html"


def report_from_check(seed: int, folder: Path) -> Path:
    subprocess.run([sys.executable, "-m", "kmodel", "check", "--seed", str(seed), "--report", str(folder)],
                   cwd=ROOT, check=False)
    return folder / "report.html"


def dump_dom(chromium: str, page: Path) -> str:
    """The page's DOM once its scripts ran (Mermaid's drawing included)."""
    run = subprocess.run([chromium, *OFFLINE, "--dump-dom", page.resolve().as_uri()], capture_output=True,
                         text=True, timeout=180)
    return run.stdout


def screenshot(chromium: str, page: Path, png: Path, *, width: int = 1280, height: int = 2400) -> Path:
    url = page.resolve().as_uri()
    subprocess.run([chromium, *OFFLINE, f"--screenshot={png}", f"--window-size={width},{height}", url],
                   capture_output=True, text=True, timeout=180)
    return png


def violations_page(page: Path) -> Path:
    """A copy of the page beside it showing only its violations (the other sections hidden), to screenshot
    what a violation shows without the tables above it."""
    view = page.with_name("report-violations.html")
    hide = "<style>#summary, #invariants, #rules, #sometimes { display: none; }</style>\n</head>"
    view.write_text(page.read_text(encoding="utf-8").replace("</head>", hide, 1), encoding="utf-8")
    return view


def diagrams_drawn(dom: str) -> tuple[bool, int, int]:
    """(every diagram drawn, diagrams, SVGs of sequence diagrams) in a dumped DOM."""
    blocks = len(re.findall(r'<pre class="mermaid"', dom))
    svgs = len(re.findall(r'<svg[^>]*aria-roledescription="sequence"', dom))
    return 'data-diagrams="drawn"' in dom and svgs == blocks > 0, blocks, svgs


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=14, help="the seed to check (default 14)")
    parser.add_argument("--trace", type=Path, default=None, help="replay this trace instead of running a check")
    parser.add_argument("--out", type=Path, default=None,
                        help="report and screenshot folder (default: a temporary one)")
    args = parser.parse_args(argv)
    chromium = find_chromium()
    if chromium is None:
        print("no chromium found on PATH (apt-get install -y chromium)", file=sys.stderr)
        return 2
    folder = args.out or Path(tempfile.mkdtemp(prefix="kmodel-report-"))
    page = report_from_trace(args.trace, folder) if args.trace else report_from_check(args.seed, folder)
    drawn, blocks, svgs = diagrams_drawn(dump_dom(chromium, page))
    top = screenshot(chromium, page, folder / "report.png", height=2400)
    violations = screenshot(chromium, violations_page(page), folder / "report-violations.png", height=4000)
    print(f"{page}: {svgs} of {blocks} diagrams drawn offline; screenshots {top} and {violations}")
    return 0 if drawn else 1


if __name__ == "__main__":
    sys.exit(main())
