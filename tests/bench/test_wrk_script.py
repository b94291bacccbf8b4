"""The bench's machinery: gunicorn started and stopped, bench/requests.lua in wrk, CPU read from /proc."""

import os

from bench import run, servers


def test_wrk_sends_the_listed_requests_counts_the_failures_and_the_workers_cpu(server_env, tmp_path):
    requests_file = tmp_path / "requests.tsv"
    # A page that answers 200, one that redirects (wrk alone would count it as a success), one that is missing.
    requests_file.write_text("GET\t/healthz\t\t\nGET\t/accounts\t\t\nGET\t/no-such-page/\t\t\n")

    with servers.gunicorn(server_env) as (base, master):
        workers = servers.worker_pids(master)
        cpu_before = servers.cpu_seconds(workers)
        result = run.wrk(base, requests_file, csrf_token="", connections=2, seconds=1)
        cpu = servers.cpu_seconds(workers) - cpu_before

    assert len(workers) == 2
    assert result["requests"] >= 3
    # Two requests in every three fail, whichever the run ends on (each thread walks the list).
    assert result["requests"] * 2 // 3 - 2 <= result["non_2xx"] <= result["requests"] * 2 // 3 + 2
    assert result["p99_ms"] > 0
    assert cpu > 0
    assert not any(os.path.exists(f"/proc/{pid}") for pid in [master, *workers])  # all stopped
