"""Torrc lines: control characters refused; lines that open the network
refused on the shared loopback unless meant, warned about in a namespace."""

from __future__ import annotations

from typing import Any

import pytest

from runner.errors import SpecError
from runner.network.exposure import check_exposure, opening_lines
from tests.specs import ci_small_data, spec_of


def _spec(lines: list[str], **variant: Any) -> Any:
    data = ci_small_data()
    data["variants"]["conflux-on"]["torrc"]["exit"] = lines
    data["variants"]["conflux-on"].update(variant)
    return spec_of(data)


def test_a_control_character_in_a_torrc_line_is_refused() -> None:
    with pytest.raises(SpecError) as info:
        _spec(["ExitPolicy reject *:*\r"])
    assert info.value.key == "variants.conflux-on.torrc.exit[0]"
    assert "U+000D" in info.value.expected


@pytest.mark.parametrize(
    ("line", "opens"),
    [
        ("ExitPolicy accept *:*", True),
        ("ExitPolicy accept *4:80, reject *:*", True),
        ("ExitPolicy accept 10.0.0.0/8:*, reject *:*", False),
        ("ExitPolicy reject *:*", False),
        ("SocksPort 0.0.0.0:9150", True),
        ("SocksPort 9150", False),
        ("SocksPort 127.0.0.1:9150", False),
        ("ControlPort 192.0.2.1:9051", True),
        ("ConfluxEnabled 1", False),
    ],
)
def test_lines_that_open_the_network_are_found(line: str, opens: bool) -> None:
    variant = _spec([line]).variant("conflux-on")
    assert bool(opening_lines(variant)) is opens


def test_opening_lines_are_refused_on_the_shared_loopback_unless_meant() -> None:
    spec = _spec(["ExitPolicy accept *:*"])
    with pytest.raises(SpecError) as info:
        check_exposure(spec, shared_loopback=True)
    assert info.value.key == "variants.conflux-on.torrc"
    assert "exit: ExitPolicy accept *:*" in info.value.expected
    assert "opens_network: true" in info.value.expected
    (warning,) = check_exposure(spec, shared_loopback=False)
    assert warning.startswith("warning: conflux-on: exit: ExitPolicy accept *:*")
    meant = _spec(["ExitPolicy accept *:*"], opens_network=True)
    assert check_exposure(meant, shared_loopback=True) == []
