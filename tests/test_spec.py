import re
import time
import tracemalloc
from pathlib import Path

import pytest
import yaml

from runner.errors import SpecError
from runner.experiments import load_spec, parse_spec
from runner.spec.consensus import known_consensus_params
from runner.spec.dump import spec_yaml
from runner.spec.parse import spec_data
from tests.conftest import CI_SMALL, FIXTURES, ROOT
from tests.specs import ci_small_data, spec_of, write_spec


def _broken(text: str, tmp_path: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    data = ci_small_data(text)
    edit(data)
    return write_spec(data, tmp_path, "broken.yaml")


def test_ci_small_is_valid() -> None:
    spec = load_spec(CI_SMALL)
    assert spec.name == "ci-small"
    assert [v.name for v in spec.variants] == ["conflux-off", "conflux-on"]
    assert spec.seeds == (1, 2)
    assert spec.baseline == "conflux-off"
    assert len(spec.sha256) == 64
    assert spec.variant("conflux-on").torrc["client"] == ("ConfluxEnabled 1",)
    assert spec.stop_time == 900
    assert spec.comparisons == (("conflux-on", "conflux-off"),)
    assert spec.variant("conflux-on").expect["conflux_legs"] == 2
    assert spec.class_sizes() == {"perf": (51200, 1048576, 5242880)}


@pytest.mark.parametrize(
    ("edit", "key", "expected"),
    [
        (lambda d: d.update(colour="blue"), "colour", "unknown key"),
        (
            lambda d: d["network"]["relays"]["exit"].update(count="two"),
            "network.relays.exit.count",
            "expected an integer",
        ),
        (
            lambda d: d["duration"].update(measure="ten minutes"),
            "duration.measure",
            "expected a time such as",
        ),
        (
            lambda d: d["network"]["topology"].update(generator="torus"),
            "network.topology.generator",
            "unknown topology generator",
        ),
        (
            lambda d: d["workloads"]["perf"]["params"].update(sizes=[]),
            "workloads.perf.params.sizes",
            "non-empty list",
        ),
        (
            lambda d: d["network"]["clients"]["perf"].update(workload="video"),
            "network.clients.perf.workload",
            "no workload called 'video'",
        ),
        (
            lambda d: d["variants"]["conflux-on"]["torrc"].update(bridge=["UseBridges 1"]),
            "variants.conflux-on.torrc.bridge",
            "unknown role",
        ),
        (lambda d: d.update(baseline="vanilla"), "baseline", "expected one of the variants"),
        (
            lambda d: d.update(checks={"load": {"busiest bridge": ["50%", "90%"]}}),
            "checks.load.busiest bridge",
            "expected one of: relays, exitguard, exit, guard, middle, busiest relays",
        ),
        (
            lambda d: d.update(checks={"load_variants": ["conflux-on", "vanilla"]}),
            "checks.load_variants[1]",
            "expected one of the variants",
        ),
        (
            lambda d: d["variants"]["conflux-on"]["torrc"].update(
                authority=["ConsensusParams cfx_enabled=1"]
            ),
            "variants.conflux-on.torrc.authority[0]",
            "under the variant's 'consensus' key",
        ),
        (lambda d: d["network"]["relays"].pop("exit"), "network.relays", "at least one exit"),
        (
            lambda d: d["network"]["relays"]["middle"].update(
                bandwidth_of={"relay1exit": "7 Mbit"}
            ),
            "network.relays.middle.bandwidth_of.relay1exit",
            "expected a relay of this group (relay5middle to relay6middle), got 'relay1exit'",
        ),
        (
            lambda d: d["network"]["relays"]["middle"].update(
                bandwidth_of={"relay6middle": "fast"}
            ),
            "network.relays.middle.bandwidth_of.relay6middle",
            "expected a bandwidth",
        ),
        (
            lambda d: d["network"]["relays"]["middle"].update(bandwidth_of=["relay6middle"]),
            "network.relays.middle.bandwidth_of",
            "expected a mapping of this group's relays to a bandwidth each, "
            "e.g. {relay5middle: 7 Mbit}",
        ),
        (
            lambda d: d["network"]["relays"]["middle"].update(bandwidth_of={}),
            "network.relays.middle.bandwidth_of",
            "expected a mapping of this group's relays",
        ),
        (
            lambda d: d["network"]["relays"].update(
                middle={"count": 2, "sample": "tor-2018", "bandwidth_of": {"relay5middle": 1}}
            ),
            "network.relays.middle.bandwidth_of",
            "unknown key",
        ),
        (lambda d: d.update(seeds=[1, 1]), "seeds", "distinct"),
        (
            lambda d: d.update(comparisons=[["conflux-on", "plain"]]),
            "comparisons[0]",
            "unknown variant 'plain'",
        ),
        (
            lambda d: d.update(comparisons=[["conflux-on", "conflux-on"]]),
            "comparisons[0]",
            "two different variants",
        ),
        (
            lambda d: d["variants"]["conflux-on"].update(expect={"conflux_legs": 9}),
            "variants.conflux-on.expect.conflux_legs",
            "at most 8",
        ),
        (
            lambda d: d["variants"]["conflux-on"].update(expect={"mctor_circuits": 3}),
            "variants.conflux-on.expect.mctor_circuits",
            "needs mctor_connections beside it",
        ),
        (
            lambda d: d["variants"]["conflux-on"].update(expect={"legs": 2}),
            "variants.conflux-on.expect.legs",
            "unknown key",
        ),
        (
            lambda d: d["network"]["clients"]["perf"].update(
                links={"home": {"share": 1.0, "bandwidth": "10 Mbit"}}
            ),
            "network.clients.perf.links",
            "give either 'links' or 'bandwidth'",
        ),
        (
            lambda d: d["network"]["clients"].update(
                perf={
                    "count": 4,
                    "workload": "perf",
                    "links": {
                        "home": {"share": 0.5, "bandwidth": "10 Mbit"},
                        "work": {"share": 0.4, "bandwidth": "10 Mbit"},
                    },
                }
            ),
            "network.clients.perf.links",
            "add up to 1 (they add up to 0.9)",
        ),
        (
            lambda d: d["variants"]["conflux-on"].update(fractions={"relay": 0.5}),
            "variants.conflux-on.fractions.relay",
            "unknown name (expected one of: client)",
        ),
        (
            lambda d: d["variants"]["conflux-on"].update(client_relays={"web": 0.1}),
            "variants.conflux-on.client_relays.web",
            "unknown name (expected one of: perf)",
        ),
        (
            lambda d: d["variants"]["conflux-on"].update(client_relays={"perf": 1.5}),
            "variants.conflux-on.client_relays.perf",
            "at most 1.0",
        ),
        (
            lambda d: d["variants"]["conflux-on"].update(extra_clients=-0.2),
            "variants.conflux-on.extra_clients",
            "at least 0.0",
        ),
        (
            lambda d: d["variants"]["conflux-on"].update(consensus={"cfx_enabled": "yes"}),
            "variants.conflux-on.consensus.cfx_enabled",
            "expected an integer",
        ),
    ],
)
def test_broken_specs_name_file_key_and_expectation(
    ci_small_text: str,
    tmp_path: Path,
    edit,
    key: str,
    expected: str,  # type: ignore[no-untyped-def]
) -> None:
    path = _broken(ci_small_text, tmp_path, edit)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert info.value.path == str(path)
    assert info.value.key == key
    assert expected in info.value.expected
    assert str(info.value).startswith(f"{path}: {key}: ")


def test_missing_spec_file(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no such spec file"):
        load_spec(tmp_path / "nope.yaml")


def test_a_copy_keeping_another_specs_name_is_refused(tmp_path: Path) -> None:
    original = tmp_path / "ci-small.yaml"
    original.write_text(CI_SMALL.read_text())
    copy = tmp_path / "my.yaml"
    copy.write_text(CI_SMALL.read_text().replace("ControlPort", "ControlPort", 1))
    with pytest.raises(SpecError) as info:
        load_spec(copy)
    assert (info.value.path, info.value.key) == (str(copy), "name")
    assert f"{original} is the spec named 'ci-small'" in info.value.expected
    assert "the results folder comes from `name:`" in info.value.expected
    assert "name: my" in info.value.expected
    assert load_spec(original).name == "ci-small"  # the owner itself loads
    copy.write_text(CI_SMALL.read_text().replace("name: ci-small", "name: my", 1))
    assert load_spec(copy).name == "my"  # a name of its own: its own results folder


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nseeds: [1, 2\n")
    with pytest.raises(SpecError, match="line"):
        load_spec(path)


def test_multi_region_topology_needs_every_pair(ci_small_text: str) -> None:
    data = ci_small_data(ci_small_text)
    data["network"]["topology"] = {
        "generator": "multi_region",
        "params": {"regions": ["na", "eu"], "latency": {"na-na": "10 ms", "na-eu": "45 ms"}},
    }
    with pytest.raises(SpecError, match="missing latency for the pair 'eu-eu'"):
        parse_spec(data, "x.yaml")
    data["network"]["topology"]["params"]["latency"]["eu-eu"] = "8 ms"
    spec = parse_spec(data, "x.yaml")
    assert spec.network.topology.regions == ("na", "eu")


def test_every_committed_config_is_valid() -> None:
    for path in sorted((CI_SMALL.parent).glob("*.yaml")):
        spec = load_spec(path)
        assert spec.name == path.stem


def test_an_unknown_consensus_parameter_is_an_error_naming_the_known_ones(
    tmp_path: Path,
) -> None:
    text = (ROOT / "configs" / "ci-small.yaml").read_text()
    bad = tmp_path / "typo.yaml"
    bad.write_text(
        text.replace(
            "      client: [ConfluxEnabled 1]",
            "      client: [ConfluxEnabled 1]\n    consensus: {cc_algg: 2}",
        )
    )
    with pytest.raises(SpecError) as info:
        load_spec(bad)
    assert info.value.path == str(bad)
    assert info.value.key == "variants.conflux-on.consensus.cc_algg"
    assert "did you mean cc_alg" in info.value.expected
    assert "tor-patches/consensus-params.txt" in info.value.expected
    # Said on purpose, a new parameter is taken.
    bad.write_text(bad.read_text() + "new_consensus_params: [cc_algg]\n")
    assert load_spec(bad).variant("conflux-on").consensus == {"cc_algg": 2}


def test_every_parameter_a_patch_reads_is_known() -> None:
    read = set()
    for patch in sorted((ROOT / "tor-patches").glob("**/*.patch")):
        added = "\n".join(
            line[1:] for line in patch.read_text().splitlines() if line.startswith("+")
        )
        read |= set(re.findall(r'networkstatus_get_param\(\s*\w+,\s*"([A-Za-z0-9_-]+)"', added))
    assert {"n23", "hop_window", "cc_hop_feedback", "perconnbwperclient"} <= read
    assert read <= known_consensus_params()
    assert {"cc_alg", "cfx_num_legs_set", "perconnbwrate", "circwindow"} <= known_consensus_params()


def test_an_alias_bomb_is_refused_at_once_without_expanding_it(tmp_path: Path) -> None:
    levels = ["&a [1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    for i in range(1, 9):
        prev, name = chr(ord("a") + i - 1), chr(ord("a") + i)
        levels.append(f"&{name} [{', '.join([f'*{prev}'] * 9)}]")
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(f"name: x\nseeds: [1, 2, [{', '.join(levels)}]]\n")
    tracemalloc.start()
    started = time.monotonic()
    with pytest.raises(SpecError) as info:
        load_spec(bomb)
    elapsed = time.monotonic() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "aliases" in info.value.expected and info.value.path == str(bomb)
    assert elapsed < 1.0 and peak < 100 * 2**20


@pytest.mark.parametrize(
    ("change", "key", "message"),
    [
        ({"size": "2 MiB"}, "size", "no workload of perf transfers 2 MiB (sizes: 50 KiB, 1 MiB"),
        ({"metric": "round_completion", "size": None}, "metric", "needs a rounds workload"),
        ({"class": "bulk"}, "class", "unknown client class 'bulk'"),
    ],
)
def test_a_hypothesis_must_ask_about_what_the_workloads_do(
    change: dict[str, object], key: str, message: str
) -> None:
    data = ci_small_data()
    hypothesis = data["hypotheses"][0]
    for name, value in change.items():
        if value is None:
            hypothesis.pop(name)
        else:
            hypothesis[name] = value
    with pytest.raises(SpecError) as info:
        spec_of(data)
    assert info.value.key == f"hypotheses[0].{key}"
    assert message in info.value.expected


def test_a_hypothesis_phase_must_be_one_of_the_rounds() -> None:
    data = spec_data(ROOT / "configs" / "mctor-small.yaml")
    rounds = [h for h in data["hypotheses"] if h["metric"] == "round_completion"]
    rounds[0]["phase"] = "no-such-phase"
    index = data["hypotheses"].index(rounds[0])
    with pytest.raises(SpecError) as info:
        parse_spec(data, "mctor-small.yaml")
    assert info.value.key == f"hypotheses[{index}].phase"
    assert "has a phase 'no-such-phase'" in info.value.expected


@pytest.mark.parametrize(
    "path",
    [*sorted((ROOT / "configs").glob("*.yaml")), *sorted(FIXTURES.glob("*/spec.yaml"))],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_a_spec_written_back_loads_the_same_and_keeps_its_folded_strings(path: Path) -> None:
    spec = load_spec(path)
    for width in (80, 100):
        text = spec_yaml(spec.raw, width)
        assert yaml.safe_load(text) == spec.raw
        assert "''" not in text
        assert not [line for line in text.splitlines() if line.strip() in ("'", '"')]
    if isinstance(spec.raw.get("description"), str) and len(spec.raw["description"]) > 100:
        assert spec_yaml(spec.raw).startswith(f"name: {spec.name}\ndescription: >")


def test_a_spec_written_back_keeps_lines_apostrophes_and_short_lists() -> None:
    raw = {
        "folded": ", ".join(["one long line, as a folded block gives it"] * 3) + "\n",
        "lines": "first line\nsecond line\n",
        "quoted": "Table I: C2's ratio over C1's",
        "short": "a client's",
        "spaces": "trailing spaces   \nkept",
        "seeds": [1, 2],
        "long": ["a fairly long torrc line number one", "a fairly long torrc line two"],
    }
    text = spec_yaml(raw)
    assert yaml.safe_load(text) == raw
    assert text.splitlines()[0] == "folded: >"
    assert "lines: |\n  first line\n  second line\n" in text
    assert "quoted: \"Table I: C2's ratio over C1's\"\n" in text
    assert "short: a client's\n" in text
    assert "seeds: [1, 2]\n" in text and "long:\n- a fairly long" in text
