"""The logs of one run: found by host and program, read through the damaged-line
accounting of runner.logs.damage."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from runner.layout import SHADOW_DATA
from runner.logs.damage import LogDamage, clean_lines
from runner.manifest import RunRecord


class RunLogs:
    """The logs of one run, read line by line through ``clean_lines``: what
    was damaged is recorded per log, once however often a log is read."""

    def __init__(
        self,
        run_dir: Path,
        run: RunRecord,
        record_markers: dict[str, tuple[str, ...]] | None = None,
    ) -> None:
        self.run_dir, self.run = run_dir, run
        # program -> the markers of the lines that carry a record, as the
        # tables being collected declared them
        self.record_markers = record_markers or {}
        self.damage: dict[str, LogDamage] = {}

    def of(self, host: str, program: str) -> list[Path]:
        """``host``'s logs of ``program``; none is recorded as a missing log."""
        logs = sorted((self.run_dir / SHADOW_DATA / "hosts" / host).glob(f"{program}.*.stdout"))
        if not logs:
            name = f"{SHADOW_DATA}/hosts/{host}/{program}.*.stdout"
            self.damage.setdefault(name, LogDamage(name, missing=True))
        return logs

    def lines(self, path: Path, markers: tuple[str, ...]) -> Iterator[str]:
        name = str(path.relative_to(self.run_dir))
        first_read = name not in self.damage
        damage = self.damage.setdefault(name, LogDamage(name, markers))
        return clean_lines(path, damage if first_read else LogDamage(name, markers))

    def on_error(self, path: Path) -> Callable[[int, str, str], None]:
        return self.damage[str(path.relative_to(self.run_dir))].skip

    def damaged(self) -> list[LogDamage]:
        return [d for _, d in sorted(self.damage.items()) if d.damaged]
