"""``forestcoll study``: JSON keys, errors, and a real Dask cluster that loses a worker mid-study."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

from solver.cli import main
from solver.io.hdf5.studies import read_study
from solver.io.templates import dgx_a100
from solver.studies import DaskEngine, failure_plan, run_study

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_topologies" / "dgx_a100_2x.json"


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solver.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env(),
        cwd=ROOT,
    )


@pytest.mark.slow
def test_failures_json_on_a_local_cluster(tmp_path):
    out = tmp_path / "r.h5"
    proc = _cli("study", "failures", str(SAMPLE), "--workers", "1", "--json", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["study"] == "failures"
    assert doc["base"] == {"algbw": pytest.approx(1040 / 3), "algbw_exact": "1040/3"}
    assert len(doc["rows"]) == 68  # 2 NVSwitches, 16 NICs, 2 IB switches, 48 links
    for row in doc["rows"]:
        assert {"element", "kind", "algbw", "algbw_exact", "change", "connected"} <= set(row)
        assert Fraction(row["algbw_exact"]) <= Fraction(1040, 3)
        assert row["algbw"] == pytest.approx(float(Fraction(row["algbw_exact"])))
    assert doc["rows"][0]["change"] == min(r["change"] for r in doc["rows"])  # worst first
    assert doc["symmetry"]["orbits"] == 35
    stored = read_study(out, "failures_allgather")
    assert stored.complete and len(stored.rows) == 68
    show = _cli("show", str(out))
    assert "failures_allgather: failures (allgather), 68 of 68 rows, complete" in show.stdout


@pytest.mark.parametrize(
    "args,message",
    [
        (["failures", "SAMPLE", "--elements", "links,cables"], "unknown element kind 'cables'"),
        (["failures", "SAMPLE", "--resume"], "--resume needs the results file"),
        (["failures", "SAMPLE", "-o", "x.json"], "HDF5 results file"),
        (["failures", "SAMPLE", "--workers", "0"], "--workers must be >= 1"),
        (["upgrade", "SAMPLE", "--factor", "1"], "--factor must be > 1"),
        (["upgrade", "SAMPLE", "--add", "-3"], "--add must be > 0"),
        (["sweep", "--template", "nope"], "unknown template 'nope'"),
        (["sweep", "--template", "ring", "--param", "n"], "--param needs NAME=V1,V2"),
        (["sweep", "--template", "ring", "--param", "wings=2"], "no parameter 'wings'"),
        (["failures", "missing.json"], "missing.json"),
        (["sweep", "--topologies", "no_such_dir"], "no_such_dir: not a folder"),
    ],
)
def test_bad_input_is_one_error_line(args, message, capsys):
    args = [str(SAMPLE) if a == "SAMPLE" else a for a in args]
    assert main(["study", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err
    assert err.count("\n") == 1


def test_every_study_help_ends_with_an_example(capsys):
    for study in ("failures", "upgrade", "sweep"):
        with pytest.raises(SystemExit):
            main(["study", study, "--help"])
        out = capsys.readouterr().out
        assert out.rstrip().splitlines()[-1].strip().startswith("forestcoll study " + study)


def _start(cmd: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        cmd,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        env=_env(),
        cwd=ROOT,
        start_new_session=True,
    )


@pytest.mark.slow
def test_a_worker_killed_halfway_costs_its_tasks_not_the_study(tmp_path):
    from distributed import Client

    sched_file = tmp_path / "scheduler.json"
    procs = [
        _start(
            [
                "dask",
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(sched_file),
            ],
            tmp_path / "scheduler.log",
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        for i in range(2):
            procs.append(
                _start(
                    [
                        "dask",
                        "worker",
                        "--scheduler-file",
                        str(sched_file),
                        "--nthreads",
                        "1",
                        "--no-nanny",
                        "--no-dashboard",
                        "--host",
                        "127.0.0.1",
                        "--name",
                        f"w{i}",
                    ],
                    tmp_path / f"worker{i}.log",
                )
            )
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
            workers = {
                info["name"]: addr for addr, info in client.scheduler_info()["workers"].items()
            }
        pids = {f"w{i}": procs[i + 1].pid for i in range(2)}  # --no-nanny: the worker itself
        topo = dgx_a100(2)
        plan = failure_plan(topo, ["links", "switches", "nics"], use_symmetry=False)
        out = tmp_path / "r.h5"
        killed = {}

        with DaskEngine(scheduler=address) as engine:

            def kill_halfway(rows_done, total):
                if not killed and rows_done >= total // 2:
                    # tasks running there, or finished there but not yet gathered: lost with it
                    running = engine.client.processing()
                    held = engine.client.has_what()

                    def tasks(name):
                        keys = [*running.get(workers[name], ()), *held.get(workers[name], ())]
                        return sum(1 for k in keys if str(k).startswith("evaluate_batch"))

                    victim = max(workers, key=tasks)
                    killed.update(
                        name=victim,
                        busy=tasks(victim),
                        done=rows_done,
                        running=len(running.get(workers[victim], ())),
                    )
                    os.kill(pids[victim], signal.SIGKILL)

            result = run_study(plan, engine, output=out, batch_size=1, progress=kill_halfway)
            survivors = engine.client.nthreads()
        assert killed and killed["done"] < len(plan.keys)
        assert killed["busy"] >= 1, killed  # it died holding tasks
        assert workers[killed["name"]] not in survivors and len(survivors) == 1
        assert len(result.rows) == len(plan.keys) == 68
        # the same study computed in this process, without the cluster, gives the same rows
        with Client(processes=False, n_workers=1, dashboard_address=":0") as local:
            with DaskEngine(client=local) as inline:
                reference = run_study(failure_plan(topo, ["links", "switches", "nics"]), inline)
        expected = {r["element"]: r["algbw_exact"] for r in reference.rows}
        assert {r["element"]: r["algbw_exact"] for r in result.rows} == expected
        stored = read_study(out, "failures_allgather")
        assert stored.complete and {r["element"] for r in stored.rows} == set(expected)

        # the CLI on the surviving worker
        proc = _cli(
            "study", "upgrade", str(SAMPLE), "--by", "class", "--scheduler", address, "--json"
        )
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["study"] == "upgrade" and doc["rows"][0]["change"] > 0
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


def test_unreachable_scheduler_is_one_error_line(capsys):
    code = main(["study", "failures", str(SAMPLE), "--scheduler", "tcp://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(
        "error: cannot reach the Dask scheduler at tcp://127.0.0.1:9"
    )


def test_a_scheduler_that_accepts_and_never_answers_is_one_error_line(capsys, monkeypatch):
    """A TCP peer that accepts and stays silent used to hang ``study --scheduler`` forever
    (distributed reads the handshake without a deadline); now the handshake has one."""
    import socket
    import threading
    import time

    from solver.studies import engine

    monkeypatch.setattr(engine, "CONNECT_S", 2.0)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted = []
    threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()
    port = server.getsockname()[1]
    try:
        start = time.monotonic()
        code = main(["study", "failures", str(SAMPLE), "--scheduler", f"tcp://127.0.0.1:{port}"])
        spent = time.monotonic() - start
    finally:
        server.close()
    err = capsys.readouterr().err
    assert accepted, "the peer never saw the connection"
    assert code == 2 and err.count("\n") == 1, err
    assert "no handshake within 2 s" in err and spent < 30
