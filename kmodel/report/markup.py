"""Text made safe for the reports: Markdown inline text and code spans, HTML text. The report's sections
(render.py, findings.py) share these, so every one escapes alike."""

from __future__ import annotations

import html
import re
from typing import Any

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|&~])")


def md_inline(text: str) -> str:
    """Free text for Markdown: one line, Markdown punctuation backslash-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def md_code(text: str) -> str:
    """An inline code span holding `text` exactly (on one line), whatever backticks it contains."""
    line = " ".join(str(text).split())
    longest = max((len(run) for run in re.findall(r"`+", line)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if line.startswith("`") or line.endswith("`") or not line.strip() else ""
    return f"{fence}{pad}{line}{pad}{fence}"


def html_text(text: Any) -> str:
    """`text` escaped for HTML text and attribute values."""
    return html.escape(str(text), quote=True)
