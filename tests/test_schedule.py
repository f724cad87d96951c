"""Process schedules, and how Shadow is told to start and stop them."""

from runner.network.plan import Host
from runner.network.schedule import host_processes
from runner.network.shadow_config import shadow_process

CLIENT = Host("markovclient1exit", "client", "web", "100.2.0.1", 0, "r", 10**7, 10**7, "web")


def test_each_session_is_a_tgen_process_stopped_at_its_end() -> None:
    sessions = [(300.0, 1200.0), (1800.5, None)]
    procs = host_processes(CLIENT, 9051, "tgen.graphml", "tgen-server.graphml", sessions)
    assert [p.program for p in procs] == ["tor", "oniontrace", "tgen", "tgen"]
    first, last = (shadow_process(p, {"tgen": "/bin/tgen"}) for p in procs[2:])
    assert first["start_time"] == "300 s" and first["shutdown_time"] == "1200 s"
    # tgen has no SIGTERM handler, so Shadow must expect the signal to end it.
    assert first["expected_final_state"] == {"signaled": "SIGTERM"}
    assert last["start_time"] == "1800500 ms" and "shutdown_time" not in last
    assert last["expected_final_state"] == "running"


def test_servers_listen_from_the_start() -> None:
    server = Host("server1exit", "server", "server", "100.3.0.1", 0, "r", 10**9, 10**9)
    procs = host_processes(server, 9051, None, "tgen-server.graphml", [])
    assert [(p.program, p.start, p.stop) for p in procs] == [("tgen", 1, None)]


def test_every_program_runs_with_its_clock_zone_named() -> None:
    """TZ set: glibc and GLib read no /etc/localtime per timestamp under
    Shadow, and the logs' local times are the same on any machine."""
    procs = host_processes(CLIENT, 9051, "tgen.graphml", "tgen-server.graphml", [(300.0, None)])
    paths = {"tor": "/bin/tor", "oniontrace": "/bin/oniontrace", "tgen": "/bin/tgen"}
    entries = [shadow_process(p, paths) for p in procs]
    assert entries and all(e["environment"] == {"TZ": "UTC"} for e in entries)
    entries[0]["environment"]["TZ"] = "changed"  # each process has its own copy
    assert shadow_process(procs[1], paths)["environment"] == {"TZ": "UTC"}
