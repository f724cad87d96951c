"""Each committed results fixture's report.md is exactly the one committed
beside it (``tests/fixtures/<name>/report.md``): a change to how the
runner computes or writes a report shows up here, line by line.

When a change to a report is meant, write the new ones with
``python -m tests.test_report_golden`` and commit them with the change.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, fixture_report

NAMES = ("conflux-small-pilot", "congestion-small", "mctor-small", "tortoise-small")
# The spec's absolute path differs per checkout.
PLACEHOLDER = "<fixtures>"


def _report(name: str, root: Path) -> str:
    return fixture_report(name, root).read_text().replace(str(FIXTURES), PLACEHOLDER)


@pytest.mark.parametrize("name", NAMES)
def test_a_fixture_report_is_byte_identical_to_the_committed_one(name: str, tmp_path: Path) -> None:
    expected = (FIXTURES / name / "report.md").read_text()
    got = _report(name, tmp_path)
    assert got.splitlines() == expected.splitlines()
    assert got == expected


def main() -> None:
    for name in sys.argv[1:] or NAMES:
        with tempfile.TemporaryDirectory() as tmp:
            (FIXTURES / name / "report.md").write_text(_report(name, Path(tmp)))
        print(f"wrote {FIXTURES / name / 'report.md'}")


if __name__ == "__main__":
    main()
