"""The files a report folder carries beside report.html so that it renders offline: Mermaid and its license.

Mermaid (the library that draws the sequence diagrams) ships inside the package as package data
(kmodel/report/assets/: its single-file browser build and its MIT license), is read through
`importlib.resources` (so it is found in an editable and a regular install alike), and is copied into each
report folder next to report.html, which loads it by a relative path. A report folder opened from disk,
without a network, draws its diagrams; a report.html copied away alone still reads, its diagrams as text.

The browser build is the classic (non-module) script: browsers refuse ES modules from file:// pages.
"""

from __future__ import annotations

from importlib import resources

#: the Mermaid release shipped in kmodel/report/assets (its npm package's dist/mermaid.min.js)
MERMAID_VERSION = "11.17.2"
#: the names the files get in the package and in a report folder
MERMAID_JS = "mermaid.min.js"
MERMAID_LICENSE = "mermaid.LICENSE"


def _asset(name: str) -> str:
    return resources.files("kmodel.report").joinpath("assets", name).read_text(encoding="utf-8")


def mermaid_js() -> str:
    """The text of Mermaid's browser build."""
    return _asset(MERMAID_JS)


def mermaid_license() -> str:
    """Mermaid's license, with the release and where it comes from."""
    return _asset(MERMAID_LICENSE)


def mermaid_files() -> dict[str, str]:
    """What a report folder with diagrams holds besides the reports: {file name: text}."""
    return {MERMAID_JS: mermaid_js(), MERMAID_LICENSE: mermaid_license()}
