"""report.html: the report as one self-contained page to share.

The Markdown report rendered to HTML (the `markdown` library, with tables),
every plot embedded (a PNG as a data URI, an SVG as itself), and the spec and the tools' versions at
the end; no file or network access is needed to open it.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

import markdown

from runner.spec.dump import spec_yaml
from runner.spec.model import Spec

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto;
       padding: 0 1rem; line-height: 1.45; color: #1b1b1b; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #c8c8c8; padding: 0.25rem 0.5rem; text-align: left; }
th { background: #f0f0f0; }
img { max-width: 100%; display: block; margin: 1rem 0; }
pre { background: #f6f6f6; padding: 0.8rem; overflow-x: auto; font-size: 0.85rem; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; margin-top: 2rem; }
"""
_IMAGE = re.compile(r'<img alt="([^"]*)" src="([^"]+\.png)"\s*/?>')
_SVG = re.compile(r'(?:<p>)?<img alt="([^"]*)" src="([^"/]+\.svg)"\s*/?>(?:</p>)?')


def _embed_images(body: str, directory: Path) -> str:
    def embed(match: re.Match[str]) -> str:
        alt, name = match.group(1), match.group(2)
        path = directory / name
        if "/" in name or not path.is_file():
            return match.group(0)
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return f'<img alt="{alt}" src="data:image/png;base64,{data}">'

    return _SVG.sub(lambda m: _inline_svg(m, directory), _IMAGE.sub(embed, body))


def _inline_svg(match: re.Match[str], directory: Path) -> str:
    """An SVG plot written into the page itself (not as an image), so that
    its parts are part of the page: the claims plot's rows can be found."""
    path = directory / match.group(2)
    if not path.is_file():
        return match.group(0)
    text = path.read_text()
    start = text.find("<svg")
    label = html.escape(match.group(1))
    return f'<figure role="img" aria-label="{label}">{text[start:]}</figure>'


def write_html(markdown_text: str, spec: Spec, versions: str, directory: Path) -> Path:
    """Write ``directory``/report.html from the Markdown report beside its plots."""
    body = _embed_images(markdown.markdown(markdown_text, extensions=["tables"]), directory)
    spec_text = spec_yaml(spec.raw)
    page = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>Experiment {html.escape(spec.name)}</title>\n<style>{STYLE}</style>\n"
        "</head>\n<body>\n"
        f"{body}\n"
        "<h2>Spec and versions</h2>\n"
        f"<p>{html.escape(versions or 'versions: not recorded')}</p>\n"
        f"<p>Spec <code>{html.escape(spec.path)}</code> "
        f"(sha256 <code>{html.escape(spec.sha256[:16])}</code>), as validated:</p>\n"
        f"<pre>{html.escape(spec_text)}</pre>\n"
        "</body>\n</html>\n"
    )
    path = directory / "report.html"
    path.write_text(page)
    return path
