"""`make bench`: measure what learners hit against the framework's own floor, in the same run.

The app runs under gunicorn (2 sync workers, DEBUG off, plain HTTP) on a scratch SQLite file,
or on DATABASE_URL (PostgreSQL) and REDIS_URL when they are set. bench/prepare.py makes the
data (learners with histories, a lesson of 200 deep dives, a learner of 10,000 answers) and
counts each target's queries; wrk (bench/requests.lua) loads each target in turn while the
workers' CPU time is read from /proc. A target's cost is its CPU per request, and its ratio
is that cost over its floor's (a trivial view through the same middleware, bench/floor_urls.py).
Then two instances share the database (bench/instances.py). Prints a table, writes
bench/results/latest.json and exits 1 when a budget fails.

BENCH_SECONDS (default 10) sets the seconds per target: 2 gives a run of about a minute.
BENCH_ONLY=name,name measures only those targets (and their floors), to look into one.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench import instances, servers

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
LUA = ROOT / "bench" / "requests.lua"
SECONDS = int(os.environ.get("BENCH_SECONDS", "10"))
CONNECTIONS = 16
CLASS_CONNECTIONS = 300  # a class opening the lesson at once
P99_MS = {CONNECTIONS: 100.0, CLASS_CONNECTIONS: 1000.0}


@dataclass(frozen=True)
class Target:
    name: str
    floor: str | None = None  # the target its CPU per request is divided by
    budget: float | None = None  # the largest ratio to the floor allowed
    connections: int = CONNECTIONS
    p99: bool = True  # held to the p99 budget (a target with a floor; not the answer floor, a yardstick)


TARGETS = [
    Target("static"),  # the ceiling: a file of the anonymous lesson page's size, served by WhiteNoise
    Target("floor_get"),
    Target("floor_get_signed_in"),
    Target("floor_post"),
    Target("floor_answer", "floor_post", p99=False),  # what storing an answer costs at the least (floor_urls.py)
    Target("lesson_anonymous", "floor_get"),
    Target("lesson_signed_in", "floor_get_signed_in", 5),
    Target("answer", "floor_post", 3),
    Target("results_full_history", "floor_get_signed_in", 4),
    Target("calculator_page", "floor_get", 4),
    Target("calculator_api", "floor_get", 2),
    Target("lesson_200_deep_dives", "floor_get_signed_in"),
    Target("lesson_10k_answers", "floor_get_signed_in"),
    Target("results_10k_answers", "floor_get_signed_in"),
    Target("lesson_signed_in_300", "floor_get_signed_in", connections=CLASS_CONNECTIONS),
]
# Pages whose queries must not grow with content or history: each pair must count the same.
SAME_QUERIES = [
    ("lesson_2_deep_dives", "lesson_200_deep_dives"),
    ("lesson_signed_in", "lesson_10k_answers"),
    ("results_full_history", "results_10k_answers"),
]


def chosen() -> list[Target]:
    """Return the targets BENCH_ONLY names with their floors (floors first), or every target."""
    only = set(filter(None, os.environ.get("BENCH_ONLY", "").split(",")))
    if not only:
        return TARGETS
    only |= {target.floor for target in TARGETS if target.name in only and target.floor}
    return [target for target in TARGETS if target.name in only]


def parse_wrk(output: str) -> dict:
    """Return req/s, p50 and p99 (ms) and the counts the Lua script printed, from wrk's output."""

    def latency_ms(label: str) -> float | None:
        match = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)\s*$", output, re.M)
        if not match:
            return None
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    counts = dict(re.findall(r"(\w+)=(\d+)", re.search(r"^BENCH (.*)$", output, re.M).group(1)))
    rps = re.search(r"Requests/sec:\s+([\d.]+)", output)
    return {
        "rps": float(rps.group(1)) if rps else 0.0,
        "p50_ms": latency_ms("50"),
        "p99_ms": latency_ms("99"),
        **{name: int(value) for name, value in counts.items()},
    }


def wrk(base: str, requests_file: Path, csrf_token: str, connections: int, seconds: int) -> dict:
    threads = min(2, connections)
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "10s"]
    env = {**os.environ, "BENCH_REQUESTS": str(requests_file), "BENCH_CSRF": csrf_token}
    result = subprocess.run(
        [*command, "-s", str(LUA), base + "/"], capture_output=True, text=True, env=env, timeout=seconds + 60
    )
    if result.returncode != 0 or "BENCH " not in result.stdout:
        raise RuntimeError(f"wrk failed:\n{result.stdout}\n{result.stderr}")
    return parse_wrk(result.stdout)


def measure(base: str, master: int, access_log: Path, target: Target, plan: dict, workdir: Path) -> dict:
    """Load one target with wrk; return its numbers with the workers' CPU milliseconds per request.

    CPU time and requests served are both read on the server's side at the same moment, so a
    request wrk gave up on but the server answered still counts, and the cost stays exact
    to within the one request each worker may be in the middle of.
    """
    requests_file = workdir / f"{target.name}.tsv"
    requests_file.write_text(
        "".join(f"{r['method']}\t{r['path']}\t{r['cookie']}\t{r.get('body', '')}\n" for r in plan["requests"][target.name])
    )  # fmt: skip
    warm = wrk(base, requests_file, plan["csrf_token"], 2, 1)  # templates compiled, connections opened
    workers = servers.worker_pids(master)
    servers.settle(access_log, workers)  # what earlier runs left queued is not this target's
    cpu_before, served_before = servers.cpu_seconds(workers), servers.served(access_log)
    result = wrk(base, requests_file, plan["csrf_token"], target.connections, SECONDS)
    cpu, served = servers.cpu_seconds(workers) - cpu_before, servers.served(access_log) - served_before
    if servers.worker_pids(master) != workers:
        raise RuntimeError(f"a gunicorn worker was replaced while measuring {target.name}: its CPU time is lost")
    result["served"] = served
    result["cpu_ms"] = cpu * 1000 / served if served else None
    result["non_2xx"] += warm["non_2xx"]
    result["queries"] = plan["queries"].get(target.name)
    return result


def check(results: dict, queries: dict, one_truth: list[str]) -> list[str]:
    """Return every budget that failed, one line each."""
    failures = []
    for target in chosen():
        got = results[target.name]
        if not got["requests"] or got["ratio"] is None and target.floor:
            failures.append(f"{target.name}: no request completed within the {SECONDS} s run")
            continue
        if target.budget is not None and not got["ratio"] <= target.budget:
            failures.append(
                f"{target.name}: {got['ratio']:.1f}x {target.floor} in CPU per request, budget {target.budget}x"
            )
        p99_budget = P99_MS[target.connections]
        if target.floor and target.p99 and not got["p99_ms"] < p99_budget:
            failures.append(f"{target.name}: p99 {got['p99_ms']:.0f} ms at {target.connections} connections, budget {p99_budget:.0f} ms")  # fmt: skip
        if got["non_2xx"] or got["socket_errors"]:
            failures.append(f"{target.name}: {got['non_2xx']} responses not 2xx, {got['socket_errors']} socket errors")
    for small, large in SAME_QUERIES:
        if queries[small] != queries[large]:
            failures.append(f"queries not constant in size: {small} {queries[small]}, {large} {queries[large]}")
    return failures + [f"several instances, one truth: {failure}" for failure in one_truth]


def busy_machine(results: dict) -> list[str]:
    """Return a warning for each floor (or the ceiling) over the latency budget: the machine, not the app, is slow."""
    return [
        f"{target.name}: p99 {results[target.name]['p99_ms']:.0f} ms although it does nothing; other work on this "
        "machine inflates every p99"
        for target in chosen()
        if not target.floor and (results[target.name]["p99_ms"] or 0) >= P99_MS[CONNECTIONS]
    ]


def print_table(results: dict) -> None:
    header = f"{'target':<24}{'conns':>6}{'req/s':>8}{'CPU ms/req':>11}{'ratio':>8}{'budget':>8}{'p50 ms':>8}{'p99 ms':>9}{'queries':>8}  pass"
    print("\n" + header + "\n" + "-" * len(header))

    def number(value: float | None, spec: str) -> str:
        return "-" if value is None else format(value, spec)

    for target in chosen():
        r = results[target.name]
        if target.floor:
            ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        else:
            ratio = "floor" if target.name.startswith("floor") else "ceiling"
        budget = f"<={target.budget:g}x" if target.budget else ""
        queries = "" if r["queries"] is None else str(r["queries"])
        print(
            f"{target.name:<24}{target.connections:>6}{r['rps']:>8.0f}{number(r['cpu_ms'], '.2f'):>11}{ratio:>8}"
            f"{budget:>8}{number(r['p50_ms'], '.1f'):>8}{number(r['p99_ms'], '.1f'):>9}{queries:>8}  {'ok' if r['ok'] else 'FAIL'}"
        )


def python(env: dict, *args: str) -> str:
    result = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def bench(workdir: Path) -> dict:
    database_url = os.environ.get("DATABASE_URL") or f"sqlite:///{workdir / 'bench.sqlite3'}"
    env = servers.settings_env(database_url, workdir / "static")
    label = "PostgreSQL" if database_url.startswith("postgres") else "SQLite"
    label += " + Redis" if os.environ.get("REDIS_URL") else ""
    print(f"== {label}: preparing the data (migrate, content with the generated lessons, learners' histories) ==")
    started = time.monotonic()
    python(env, "-m", "bench.prepare", str(workdir / "plan.json"), time.strftime("%Y%m%d%H%M%S"))
    plan = json.loads((workdir / "plan.json").read_text())
    print(f"   ready in {time.monotonic() - started:.0f} s: {plan['history']}")
    (workdir / "static" / "bench-ceiling.html").write_bytes(b"x" * plan["anonymous_lesson_bytes"])

    results = {}
    access_log = workdir / "access.log"
    with servers.gunicorn(env, access_log=access_log) as (base, master):
        for target in chosen():
            print(f"   {target.name} ({target.connections} connections, {SECONDS} s)", flush=True)
            results[target.name] = measure(base, master, access_log, target, plan, workdir)
    for target in chosen():
        result = results[target.name]
        floor_ms = results[target.floor]["cpu_ms"] if target.floor else None
        result["ratio"] = result["cpu_ms"] / floor_ms if floor_ms and result["cpu_ms"] is not None else None

    print("== several instances, one truth: two servers on one database ==", flush=True)
    with servers.gunicorn(env) as (base_a, _), servers.gunicorn(env) as (base_b, _):
        one_truth = instances.check(
            base_a,
            base_b,
            tuple(plan["accounts"]["staff"]),
            tuple(plan["accounts"]["learner"]),
            lambda: int(python(env, "-m", "bench.prepare", "count-answers")),
        )
    failures = check(results, plan["queries"], one_truth)
    for name, result in results.items():
        result["ok"] = not any(failure.startswith(f"{name}:") for failure in failures)
    return {"database": label, "targets": results, "queries": plan["queries"], "history": plan["history"],
            "one_truth_failures": one_truth, "failures": failures, "warnings": busy_machine(results)}  # fmt: skip


def main() -> int:
    if shutil.which("wrk") is None:
        sys.exit("wrk is missing: apt-get install -y wrk")
    with tempfile.TemporaryDirectory(prefix="sil-bench-") as tmp:
        report = bench(Path(tmp))
    report["simulator"] = json.loads(python(dict(os.environ), "-m", "bench.simulator"))
    report |= {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "seconds_per_target": SECONDS,
        "budgets": {t.name: {"floor": t.floor, "ratio": t.budget} for t in TARGETS} | {"p99_ms": P99_MS},
    }
    print(f"\n{report['database']}, 2 gunicorn sync workers, {SECONDS} s per target, {os.cpu_count()} CPUs")
    print_table(report["targets"])
    print("queries: " + ", ".join(f"{name} {count}" for name, count in report["queries"].items()))
    sim = report["simulator"]
    print(f"simulator: {sim['requests']:,} requests x {sim['replicas']} replicas x {sim['policies']} policies in "
          f"{sim['best_s']:.2f} s (best of 3; median {sim['median_s']:.2f} s; CPU {sim['cpu_s']:.2f} s; budget {sim['budget_s']:g} s)")  # fmt: skip
    if report["warnings"]:
        print("\nwarning, a busy machine:\n- " + "\n- ".join(report["warnings"]))
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamped = RESULTS / f"{time.strftime('%Y%m%d-%H%M%S')}-{report['database'].split()[0].lower()}.json"
    for path in (stamped, RESULTS / "latest.json"):
        path.write_text(json.dumps(report, indent=2))
    print(f"\nwrote {stamped} and latest.json beside it")
    if report["failures"]:
        print("\nBUDGETS FAILED:\n- " + "\n- ".join(report["failures"]))
        return 1
    print("\nevery budget holds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
