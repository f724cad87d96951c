"""report.html: one self-contained page, checked in a real headless browser
(Debian's chromium or chromium-headless-shell) where one is installed."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import fixture_report, fixture_spec

BROWSER = shutil.which("chromium-headless-shell") or shutil.which("chromium")

# Observes the page without changing it: errors thrown while it loads, and
# whether every image decoded; the result goes into the DOM for --dump-dom.
PROBE_HEAD = """<script>
window.__errors = [];
window.addEventListener("error", e => window.__errors.push(String(e.message || e)), true);
</script>"""
PROBE_BODY = """<script>
window.addEventListener("load", () => {
  const images = Array.from(document.images);
  const broken = images.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt);
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({images: images.length, broken, errors: window.__errors,
                                    tables: document.querySelectorAll("table").length});
  document.body.appendChild(out);
});
</script>"""


def _png_plots(report: Path) -> int:
    """The PNG plots report.md shows (the claims plot, an SVG, is inlined)."""
    return len(re.findall(r"!\[[^\]]*\]\([^)]+\.png\)", (report / "report.md").read_text()))


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fixture_report("tortoise-small", tmp_path_factory.mktemp("html")).parent


def test_the_page_is_self_contained_and_opens_with_the_claims_and_answers(report: Path) -> None:
    page = (report / "report.html").read_text()
    plots = _png_plots(report)
    assert plots > 0 and page.count('src="data:image/png;base64,') == plots
    assert not re.search(r'(src|href)="(?!data:|#)', page), "a reference outside the page"
    assert page.index("<h2>Answers</h2>") < page.index("<h2>Variants</h2>")
    # The claims table first, then the answers, before any other table.
    assert page.index("<h2>Claims</h2>") < page.index("<table>") < page.index("<h2>Answers</h2>")
    tables = page.split("<h2>Variants</h2>")[0].count("<table>")
    assert tables == 2
    assert page.rstrip().endswith("</html>") and "<h2>Spec and versions</h2>" in page
    assert "limit-slows-bulk" in page.split("<h2>Spec and versions</h2>")[1]  # the spec


def test_the_spec_block_shows_a_folded_description_folded_without_stray_quotes(
    report: Path,
) -> None:
    # tortoise-small's description is a folded (>) string with apostrophes.
    page = (report / "report.html").read_text()
    block = re.search(r"<h2>Spec and versions</h2>.*?<pre>(.*?)</pre>", page, re.S)
    assert block
    text = html.unescape(block.group(1))
    spec = fixture_spec("tortoise-small")
    assert "\ndescription: >\n  Tortoise: relays rate-limit the traffic" in "\n" + text
    assert "relays' bandwidth scaled down" in text and "''" not in text
    assert not [line for line in text.splitlines() if line.strip() in ("'", '"')]
    assert not re.search(r"^\s*[\w-]+: '", text, re.M), "a string in single quotes"
    assert yaml.safe_load(text) == spec.raw  # the spec as validated, every value


@pytest.mark.skipif(BROWSER is None, reason="no headless browser: apt-get install chromium")
def test_the_page_loads_in_a_headless_browser_without_errors(report: Path, tmp_path: Path) -> None:
    page = (report / "report.html").read_text()
    probe = tmp_path / "probe.html"
    probe.write_text(
        page.replace("</head>", PROBE_HEAD + "</head>", 1).replace(
            "</body>", PROBE_BODY + "</body>", 1
        )
    )
    common = [str(BROWSER), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
    common += ["--virtual-time-budget=10000", "--enable-logging=stderr", "--v=0"]
    loaded = subprocess.run(
        [*common, "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=120
    )
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    found = re.search(r'<pre id="probe">(.*?)</pre>', loaded.stdout, re.S)
    assert found, loaded.stdout[-2000:] + loaded.stderr[-2000:]
    result = json.loads(found.group(1).replace("&quot;", '"'))
    plots = _png_plots(report)
    assert result == {"images": plots, "broken": [], "errors": [], "tables": result["tables"]}
    assert result["tables"] >= 5
    console = [line for line in loaded.stderr.splitlines() if "CONSOLE" in line]
    assert not console, console

    shot = tmp_path / "report.png"
    subprocess.run(
        [
            *common,
            f"--screenshot={shot}",
            "--window-size=1280,2400",
            (report / "report.html").as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert shot.stat().st_size > 50_000  # a page of text and plots, not a blank one


# The claims forest plot: one row per hypothesis that tests a claim, each a
# group with an id starting forest-row- whose text the browser lays out.
ROWS_PROBE = """<script>
window.addEventListener("load", () => {
  const rows = Array.from(document.querySelectorAll('[id^="forest-row-"]'));
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({
    rows: rows.map(r => r.id),
    drawn: rows.filter(r => r.getBBox().width > 0).length,
    svgs: document.querySelectorAll("svg").length});
  document.body.appendChild(out);
});
</script>"""


def _claim_hypotheses(report: Path) -> list[str]:
    records = json.loads((report.parent / "answers.json").read_text())
    return [r["hypothesis"] for r in records if r.get("claim")]


def _rows_in_browser(page: str, tmp_path: Path) -> dict[str, object]:
    probe = tmp_path / "rows.html"
    probe.write_text(page.replace("</body>", ROWS_PROBE + "</body>", 1))
    loaded = subprocess.run(
        [str(BROWSER), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
        + ["--virtual-time-budget=10000", "--dump-dom", probe.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = re.search(r'<pre id="probe">(.*?)</pre>', loaded.stdout, re.S)
    assert found, loaded.stdout[-2000:] + loaded.stderr[-2000:]
    result: dict[str, object] = json.loads(html.unescape(found.group(1)))
    return result


@pytest.mark.skipif(BROWSER is None, reason="no headless browser: apt-get install chromium")
def test_the_claims_plot_renders_one_row_per_claim_hypothesis(report: Path, tmp_path: Path) -> None:
    hypotheses = _claim_hypotheses(report)
    assert hypotheses  # tortoise-small's hypotheses test claims
    svg = (report / "claims.svg").read_text()
    alone = "<!DOCTYPE html>\n<html><body>" + svg[svg.index("<svg") :] + "</body></html>"
    for page in (alone, (report / "report.html").read_text()):
        result = _rows_in_browser(page, tmp_path)
        rows = result["rows"]
        assert isinstance(rows, list) and len(rows) == len(hypotheses)
        assert all(any(h in row for row in rows) for h in hypotheses)
        assert result["drawn"] == len(hypotheses)  # each row laid out, not an empty group
        assert result["svgs"] == 1
