"""What the Tortoise and MCTor reports compute for their designs' claims:
where a measured limit sat and whether it bound bulk and spared web
clients; MCTor's gain over one connection beside each variant's loss."""

from pathlib import Path

import yaml

from runner.analyses.client_bandwidth import ClientBandwidth
from runner.analyses.workload_rounds import Round, too_few_rounds
from runner.experiments import parse_spec
from runner.experiments.mctor.loss_gain import loss_gains, loss_rate
from runner.experiments.tortoise.setting import limit_settings
from runner.tables.schema import RelayRow

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def _bandwidth(variant: str, seed: int, host: str, group: str, kib: float) -> ClientBandwidth:
    return ClientBandwidth(variant, seed, host, group, int(kib * 1024 * 10), 10.0, 3)


def test_a_measured_limit_is_shown_per_seed_beside_what_it_did() -> None:
    spec = parse_spec(yaml.safe_load((CONFIGS / "tortoise-small.yaml").read_text()), "t.yaml")
    relays = [
        RelayRow("limit-low", seed, f"relay{i}", "guard", (), 1, True, rate, rate)
        for seed, rate in ((1, 220_000), (2, 250_000))
        for i in range(3)
    ]
    bandwidths = []
    for seed in (1, 2):
        bandwidths += [
            _bandwidth("unlimited", seed, "b1", "bulk", 160),
            _bandwidth("unlimited", seed, "w1", "web", 120),
            _bandwidth("limit-low", seed, "b1", "bulk", 80),
            _bandwidth("limit-low", seed, "w1", "web", 108),
            _bandwidth("relays20-low", seed, "b1", "bulk", 150),
            _bandwidth("relays20-low", seed, "w1", "web", 100),
        ]
    settings = {s.variant: s for s in limit_settings(spec, relays, bandwidths)}
    low, high = settings["limit-low"], settings["limit-high"]
    assert [x.rate for x in low.seeds] == [220_000, 250_000]
    assert high.seeds == []  # no run of it
    assert low.rule.startswith("1.4 x unlimited's bulk")
    assert round(low.bulk or 0, 3) == 0.5 and round(low.web or 0, 3) == 0.9
    # A variant that changes more than the limit says so.
    assert settings["relays20-low"].only_the_limit is False and low.only_the_limit
    # Where it sat against each class's unlimited mean (160 and 120 KiB/s).
    assert round(low.seeds[0].rate_over_bulk or 0, 3) == round(220_000 / 1024 / 160, 3)
    assert round(low.rate_over_web or 0, 3) == round((220_000 + 250_000) / 2 / 1024 / 120, 3)


def test_a_limit_given_in_the_consensus_is_read_against_the_baseline() -> None:
    """tortoise-paper's absolute limits: the same rate every seed, read
    against the unlimited baseline, with its multiple of each class's mean."""
    from runner.experiments import load_spec

    spec = load_spec(CONFIGS / "tortoise-paper.yaml")
    relays = [RelayRow("limit-low", 1, "relay1", "guard", (), 1, True, 102400, 102400)]
    bandwidths = [
        _bandwidth("unlimited", 1, "b1", "bulk", 80),
        _bandwidth("unlimited", 1, "w1", "web", 40),
        _bandwidth("limit-low", 1, "b1", "bulk", 56),
        _bandwidth("limit-low", 1, "w1", "web", 34),
    ]
    settings = {s.variant: s for s in limit_settings(spec, relays, bandwidths)}
    assert "unlimited" not in settings and "relays20" not in settings  # no limit of their own
    low = settings["limit-low"]
    assert (low.rule, low.reference) == ("100 KiB/s in the consensus, every seed", "unlimited")
    assert (low.rate_over_bulk, low.rate_over_web) == (1.25, 2.5)
    assert round(low.bulk or 0, 3) == 0.7 and round(low.web or 0, 3) == 0.85
    assert settings["limit-high"].rule.startswith("200 KiB/s") and not settings["limit-high"].seeds


def _rounds(variant: str, seed: int, phase: str, seconds: float) -> list[Round]:
    return [
        Round(variant, seed, "user", phase, 10.0 * i, 5, 5, 0, seconds, 10_000_000)
        for i in range(10)
    ]


def test_the_gain_of_n_connections_is_paired_by_seed_and_placed_at_its_loss() -> None:
    spec = parse_spec(yaml.safe_load((CONFIGS / "mctor-small.yaml").read_text()), "m.yaml")
    assert loss_rate(spec, spec.variant("base-n1-noloss")) == 0.0
    assert loss_rate(spec, spec.variant("base-n1-loss05")) == 0.0005
    all_rounds = []
    for seed, scale in ((1, 1.0), (2, 2.0)):  # seed 2 twice as slow for every variant
        all_rounds += _rounds("base-n1-loss05", seed, "download", 20 * scale)
        all_rounds += _rounds("base-n5-uniform-loss05", seed, "download", 10 * scale)
        all_rounds += _rounds("base-n1-noloss", seed, "download", 8 * scale)
        all_rounds += _rounds("base-n5-uniform-noloss", seed, "download", 8 * scale)
        all_rounds += _rounds("busy-n5-uniform-loss05", seed, "download", 5 * scale)
    gains = {(g.variant, g.phase): g for g in loss_gains(spec, all_rounds)}
    lossy = gains[("base-n5-uniform-loss05", "download")]
    assert lossy.reference == "base-n1-loss05" and lossy.loss == 0.0005
    assert lossy.others == "base" and lossy.connections == "n5-uniform"
    # Paired by seed: the seeds' own speeds cancel, so the interval is a point.
    assert round(lossy.change.mean, 6) == -0.5 and lossy.change.n == 2
    assert round(lossy.change.low or 0, 6) == -0.5
    assert round(gains[("base-n5-uniform-noloss", "download")].change.mean, 6) == 0.0
    # No one-connection run of its scenario and loss: no gain to give.
    assert ("busy-n5-uniform-loss05", "download") not in gains


def test_a_run_with_too_few_rounds_of_a_phase_is_named() -> None:
    all_rounds = _rounds("n1", 1, "download", 20.0)[:9] + _rounds("n1", 1, "video", 2.0)
    failed = Round("n1", 1, "user", "download", 500.0, 5, 4, 1, None, 10_000_000)
    failures = too_few_rounds([*all_rounds, failed], 10)
    assert [str(f) for f in failures] == [
        "n1/seed-1 user: 9 complete download rounds, fewer than 10"
    ]
    assert too_few_rounds(all_rounds, 0) == []
