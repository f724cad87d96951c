import pytest

from runner.units import (
    format_bandwidth_for_shadow,
    format_latency_for_shadow,
    format_time_for_tgen,
    parse_bandwidth,
    parse_size,
    parse_time,
)


def test_sizes_binary_and_decimal() -> None:
    assert parse_size("5 MiB") == 5 * 1024 * 1024
    assert parse_size("400 KB") == 400_000
    assert parse_size(1024) == 1024
    assert parse_size("1.5 KiB") == 1536


def test_times_and_bandwidths() -> None:
    assert parse_time("10 min") == 600
    assert parse_time("500 ms") == 0.5
    assert parse_bandwidth("100 Mbit") == 100_000_000
    assert parse_bandwidth("1 Gbit/s") == 1_000_000_000


@pytest.mark.parametrize("bad", ["5 parsecs", "", "ten MiB", True, None, "0.5 bytes"])
def test_bad_sizes_are_refused_with_a_reason(bad: object) -> None:
    with pytest.raises(ValueError, match="size|unit|whole|boolean"):
        parse_size(bad)


def test_formats_for_consumers() -> None:
    assert format_bandwidth_for_shadow(100_000_000) == "100000 kilobit"
    assert format_latency_for_shadow(0.02) == "20000 us"
    assert format_latency_for_shadow(0.0) == "1 us"  # Shadow refuses 0
    assert format_time_for_tgen(20) == "20 seconds"
    assert format_time_for_tgen(0.25) == "250 milliseconds"
