"""The report of `kmodel check --seed 14`, opened offline in headless Chromium, draws its diagram and shows the
per-step changes and the fix that takes the violation out. The report is written from the committed seed-14
trace (what `kmodel check --seed 14` writes, without its minute of search); benchmarks/report_screenshot.py
does the same and keeps a PNG to look at."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TRACE = Path(__file__).parent / "traces" / "seed-14-no-cidr-leak.json"


def _screenshot_module():
    spec = importlib.util.spec_from_file_location("report_screenshot", ROOT / "benchmarks" / "report_screenshot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


shots = _screenshot_module()
CHROMIUM = shots.find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary on PATH (apt-get install -y chromium)")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    page = shots.report_from_trace(TRACE, folder)
    html = page.read_text()
    # nothing on the page comes from a network: no URL to load anything from
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    return page, shots.dump_dom(CHROMIUM, page)


def test_the_diagram_is_drawn_offline(report):
    _, dom = report
    drawn, blocks, svgs = shots.diagrams_drawn(dom)
    assert drawn and blocks == svgs == 1, dom[-2000:]
    svg = re.search(r'<svg[^>]*aria-roledescription="sequence".*?</svg>', dom, re.S).group(0)
    # the drawn diagram holds the focused story: node-2's delete and the watch events nodeipam gets of it
    assert "delete nodes node-2" in svg and "WatchEvent DELETED nodes/node-2" in svg
    assert "update leases node-1" not in svg  # another node's heartbeat is not part of it
    assert "violated no-cidr-leak" in svg


def test_the_page_shows_the_changes_and_the_fix(report):
    _, dom = report
    assert 'id="violation-1-step-5"' in dom and "kubelet/<wbr>node-2" in dom
    assert "nodeipam-release-by-owner</code> takes this violation out" in dom


def test_a_screenshot_is_taken(report, tmp_path):
    page, _ = report
    png = shots.screenshot(CHROMIUM, page, tmp_path / "report.png", height=1200)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


#: written into the page under test: once Mermaid has drawn, where the violation and the diagram's box are
MEASURE = """<script>
function measure() {
  if (!document.body.dataset.diagrams) { setTimeout(measure, 50); return; }
  const box = document.querySelector("pre.mermaid").getBoundingClientRect();
  const violation = document.getElementById("violation-1").getBoundingClientRect();
  document.body.dataset.measured = JSON.stringify({
    violation_top: violation.top + window.scrollY, window_height: window.innerHeight,
    window_width: document.documentElement.clientWidth, box_right: box.right, box_height: box.height,
    svg_width: document.querySelector("pre.mermaid svg").getBoundingClientRect().width});
}
measure();
</script>
</body>"""


def test_at_1400_pixels_the_page_opens_on_the_violation_and_the_diagram_scrolls_in_its_box(report, tmp_path):
    import html
    import json
    import subprocess

    page, _ = report
    measured = page.with_name("measured.html")
    measured.write_text(page.read_text().replace("</body>", MEASURE, 1))
    run = subprocess.run([CHROMIUM, *shots.OFFLINE, "--window-size=1400,900", "--dump-dom", measured.as_uri()],
                         capture_output=True, text=True, timeout=180)
    found = re.search(r'data-measured="([^"]*)"', run.stdout)
    assert found, run.stdout[-2000:]
    m = json.loads(html.unescape(found.group(1)))
    assert m["violation_top"] < m["window_height"]  # the violation starts on the first screen, after the summary
    assert m["box_right"] <= m["window_width"] and m["box_height"] <= 0.85 * m["window_height"] + 1
    assert m["svg_width"] > m["box_right"] - 100  # a diagram wider than its box: it scrolls inside it
