"""Reports of a check: report.json (written by the checker, or by `write_json`), report.md and report.html.

`write_reports(report, violations, folder)` renders report.md and report.html from the report.json content
and the checker's `ViolationStory` for each violation, and returns their paths. Both files show the same
thing (see kmodel.report.render): the summary, the invariants and rules tables, and each violation as
numbered steps, a Mermaid sequence diagram (kmodel.report.mermaid) and the command that replays it. A folder
whose report has a diagram also gets mermaid.min.js and its license (kmodel.report.offline), which report.html
loads by a relative path, so the folder renders offline.

Every file is written with the mode any new file gets (0644 under the usual umask), never a temporary
file's 0600. Never a half-written report: every file is written to a temporary file in the report folder, flushed to disk,
then moved over the old one with `os.replace`, which is atomic on one filesystem. Both files are rendered
before either is written, and both temporary files are complete before either replaces its old file, so an
error while rendering or writing leaves the previous reports as they were and no temporary file behind.

Deterministic: the output depends only on the arguments (no timestamps unless the report dict holds one).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Sequence

from kmodel.report.render import build_view, render_html, render_markdown
from kmodel.report.offline import mermaid_files
from kmodel.report.story import ViolationStory

__all__ = ["ViolationStory", "write_reports", "write_json", "render_reports", "atomic_write_texts"]


def render_reports(report: dict, violations: Sequence[ViolationStory], *, max_arrows: int = 60) -> dict[str, str]:
    """The text of report.md and report.html, by file name, without writing anything."""
    view = build_view(report, list(violations), max_arrows=max_arrows)
    return {"report.md": render_markdown(view), "report.html": render_html(view)}


def new_file_mode() -> int:
    """The mode open() gives a new file: 0o666 less the process's umask (0o644 under the usual 022). mkstemp
    makes its files 0o600, which would hide a report from the others who share its folder."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def _write_temp(folder: Path, name: str, text: str) -> Path:
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, new_file_mode())
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def atomic_write_texts(folder: Path, files: dict[str, str]) -> list[Path]:
    """Write each {name: text} into `folder` atomically: all temporary files first, then the renames."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    temps: list[tuple[Path, Path]] = []
    try:
        for name, text in files.items():
            temps.append((_write_temp(folder, name, text), folder / name))
        for tmp, final in temps:
            os.replace(tmp, final)
    finally:
        for tmp, _ in temps:
            tmp.unlink(missing_ok=True)
    return [final for _, final in temps]


def write_reports(report: dict, violations: list[ViolationStory], folder: Path) -> list[Path]:
    """Write folder/report.md and folder/report.html; return their paths (in that order). With a diagram to
    draw, Mermaid and its license go beside them (kmodel.report.offline), unless already there unchanged."""
    folder = Path(folder)
    files = render_reports(report, violations)
    written = atomic_write_texts(folder, files)
    if violations:
        assets = {name: text for name, text in mermaid_files().items() if not _holds(folder / name, text)}
        if assets:
            atomic_write_texts(folder, assets)
    return written


def _holds(path: Path, text: str) -> bool:
    try:
        return path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False


def write_json(report: dict, folder: Path) -> Path:
    """Write folder/report.json atomically (keys in the dict's order, two-space indent, final newline)."""
    text = json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return atomic_write_texts(Path(folder), {"report.json": text})[0]
