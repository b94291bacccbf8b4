"""`make bench`: load the app under gunicorn and measure it with wrk against the static-file ceiling.

Prints requests per second, p50 and p99 latency and each target's ratio to a
static file of the lesson page's size served by WhiteNoise in the same run (and
to the answer's floor: bench/floor_urls.py, a signed-in POST that does nothing); the
SQL queries of each page; the calculator maths' median microseconds. Writes
bench/results/latest.json and exits 1 if a budget fails. SQLite always;
PostgreSQL too when DATABASE_URL is set.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
SECONDS = int(os.environ.get("BENCH_SECONDS", "10"))
THREADS = int(os.environ.get("BENCH_THREADS", "1"))  # gunicorn threads per worker (1 = sync workers)
CONNECTIONS = int(os.environ.get("BENCH_CONNECTIONS", "16"))
CASE_STUDY = "llm-serving-platform"
BUDGETS = {
    "ratio": {"lesson": 0.35, "answer": 0.30, "calculator_api": 0.40},
    "p99_ms": 100.0,
    "queries_per_page": 10,
    "maths_us": 50.0,
    "api_server_ms": 5.0,
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def base_env(database_url: str, static_root: str) -> dict:
    return {
        **os.environ,
        "DEBUG": "false",
        "SECRET_KEY": "bench-" + "k" * 50,
        "HTTPS": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
        "DATABASE_URL": database_url,
        "STATIC_ROOT": static_root,
        "THROTTLE_ANSWERS": "1000000/min",
        "THROTTLE_ANON": "1000000/min",
        "THROTTLE_USER": "1000000/min",
        "DJANGO_SETTINGS_MODULE": "interview.settings",
    }


def manage(env: dict, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        sys.exit(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


PREPARE = r"""
import json, sys
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.middleware.csrf import _get_new_csrf_string, _mask_cipher_secret
from lessons import services
from lessons.models import Challenge, DeepDive, Learner, Lesson, Step

# A learner who has answered everything: the heaviest results page.
user, _ = User.objects.get_or_create(username="bench-learner")
learner, _ = Learner.objects.get_or_create(user=user)
for dd in DeepDive.objects.prefetch_related("choices"):
    services.answer_deep_dive(learner, dd, dd.choices.all()[0])
for step in Step.objects.exclude(calculator=""):
    services.answer_number(learner, step, 1.0)
for ch in Challenge.objects.all():
    services.answer_number(learner, ch, 1.0, services.store_draw(learner, ch, f"user:{user.pk}"))
client = Client()
client.force_login(user)
session_key = client.cookies["sessionid"].value
secret = _get_new_csrf_string()
lesson = Lesson.objects.get(slug=sys.argv[1])
dd = DeepDive.objects.filter(section__lesson=lesson).first()
choice = dd.choices.all()[0]
pages = {
    "home": "/",
    "lesson": lesson.get_absolute_url(),
    "results": "/results/",
    "calculator_page": "/calculators/kv-cache/",
}
TRANSACTION = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")


def count(ctx):
    # Transaction control is not a query; the reads and writes are.
    return len([q for q in ctx.captured_queries if not q["sql"].startswith(TRANSACTION)])


queries = {}
sizes = {}
for name, url in pages.items():
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    queries[name] = count(ctx)
    sizes[name] = len(response.content)
# wrk fetches the lesson as a first-time visitor: the ceiling is a static file of that size.
sizes["lesson_first_visit"] = len(Client().get(lesson.get_absolute_url()).content)
answer_url = f"/lessons/{lesson.slug}/deep-dives/{dd.pk}/answer/"
client.post(answer_url, {"choice": choice.pk}, HTTP_HX_REQUEST="true")  # warm up, as wrk's repeats are
with CaptureQueriesContext(connection) as ctx:
    response = client.post(answer_url, {"choice": choice.pk}, HTTP_HX_REQUEST="true")
assert response.status_code == 200, response.status_code
queries["answer"] = count(ctx)
# Server time of each calculator's API request (median of 50, in process: no network, no client).
import statistics, time
from calculators.registry import CALCULATORS
api_ms = {}
anonymous = Client()
for slug in CALCULATORS:
    timings = []
    for _ in range(50):
        started = time.perf_counter()
        assert anonymous.get(f"/api/v1/calculators/{slug}/").status_code == 200
        timings.append((time.perf_counter() - started) * 1000)
    api_ms[slug] = round(statistics.median(timings), 3)
print(json.dumps({
    "api_server_ms": api_ms,
    "session": session_key, "csrf": secret, "csrf_masked": _mask_cipher_secret(secret),
    "answer_url": answer_url, "choice": choice.pk, "pages": pages, "queries": queries, "sizes": sizes,
}))
"""


def parse_wrk(output: str) -> dict:
    def latency_ms(label: str) -> float:
        match = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)\s*$", output, re.M)
        if not match:
            return float("nan")
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    rps = re.search(r"Requests/sec:\s+([\d.]+)", output)
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    errors = re.search(r"Socket errors:.*", output)
    return {
        "rps": float(rps.group(1)) if rps else 0.0,
        "p50_ms": latency_ms("50"),
        "p99_ms": latency_ms("99"),
        "non_2xx": int(non2xx.group(1)) if non2xx else 0,
        "socket_errors": errors.group(0) if errors else "",
    }


def wrk(url: str, headers: dict | None = None, script: Path | None = None) -> dict:
    command = ["wrk", "-t2", f"-c{CONNECTIONS}", f"-d{SECONDS}s", "--latency"]
    for name, value in (headers or {}).items():
        command += ["-H", f"{name}: {value}"]
    if script:
        command += ["-s", str(script)]
    output = subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout
    return parse_wrk(output)


def wait_until_up(url: str, timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - local URL
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    sys.exit(f"gunicorn did not answer {url} within {timeout} s")


def run_database(label: str, database_url: str, workdir: Path) -> dict:
    static_root = workdir / f"static-{label}"
    env = base_env(database_url, str(static_root))
    print(f"\n== {label}: preparing (migrate, load_content, collectstatic, a learner with a full history) ==")
    manage(env, "migrate", "--noinput")
    manage(env, "load_content")
    manage(env, "collectstatic", "--noinput")
    prepared = json.loads(manage(env, "shell", "-c", PREPARE.replace("sys.argv[1]", repr(CASE_STUDY))).splitlines()[-1])

    # The ceiling: a static file as large as the lesson page, served by WhiteNoise.
    ceiling = static_root / "bench-ceiling.html"
    ceiling.write_bytes(b"x" * prepared["sizes"]["lesson_first_visit"])

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "floor_wsgi", "--pythonpath", "bench", "--workers", "2", "--threads", str(THREADS), "--bind",
         f"127.0.0.1:{port}", "--log-level", "warning"],
        cwd=ROOT, env=env, start_new_session=True,
    )  # fmt: skip
    try:
        wait_until_up(base + "/healthz")
        cookie = f"sessionid={prepared['session']}; csrftoken={prepared['csrf']}"
        script = workdir / "answer.lua"
        script.write_text(
            'wrk.method = "POST"\n'
            f'wrk.body = "choice={prepared["choice"]}"\n'
            'wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"\n'
            f'wrk.headers["X-CSRFToken"] = "{prepared["csrf_masked"]}"\n'
            'wrk.headers["HX-Request"] = "true"\n'
            f'wrk.headers["Cookie"] = "{cookie}"\n'
        )
        targets = {
            "static": wrk(base + "/static/bench-ceiling.html"),
            "home": wrk(base + "/"),
            "lesson": wrk(base + prepared["pages"]["lesson"]),
            "answer": wrk(base + prepared["answer_url"], script=script),
            "answer_floor": wrk(base + "/bench-floor/", script=script),
            "results": wrk(base + "/results/", headers={"Cookie": cookie}),
            "calculator_api": wrk(base + "/api/v1/calculators/kv-cache/?tokens=1200&cache_gb=8"),
        }
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=20)
    static_rps = targets["static"]["rps"] or 1.0
    for result in targets.values():
        result["ratio_to_static"] = round(result["rps"] / static_rps, 3)
    return {
        "targets": targets,
        "queries": prepared["queries"],
        "lesson_bytes": prepared["sizes"]["lesson_first_visit"],
        "api_server_ms": prepared["api_server_ms"],
    }


def check_budgets(result: dict, maths: dict) -> list[str]:
    failures = []
    for name, ratio in BUDGETS["ratio"].items():
        got = result["targets"][name]["ratio_to_static"]
        if got < ratio:
            failures.append(f"{name}: {got:.2f} of the static ceiling, budget {ratio:.2f}")
    for name, target in result["targets"].items():
        if not target["p99_ms"] < BUDGETS["p99_ms"]:
            failures.append(f"{name}: p99 {target['p99_ms']:.1f} ms, budget {BUDGETS['p99_ms']:.0f} ms")
        if target["non_2xx"]:
            failures.append(f"{name}: {target['non_2xx']} non-2xx responses")
    for name, count in result["queries"].items():
        if count > BUDGETS["queries_per_page"]:
            failures.append(f"{name}: {count} queries, budget {BUDGETS['queries_per_page']}")
    for slug, millis in result["api_server_ms"].items():
        if millis > BUDGETS["api_server_ms"]:
            failures.append(
                f"calculator API {slug}: {millis:.2f} ms of server time, budget {BUDGETS['api_server_ms']} ms"
            )
    for slug, micros in maths.items():
        if micros > BUDGETS["maths_us"]:
            failures.append(f"maths {slug}: {micros:.1f} µs, budget {BUDGETS['maths_us']:.0f} µs")
    return failures


def print_report(label: str, result: dict) -> None:
    print(f"\n{label}: {CONNECTIONS} connections, {SECONDS} s per target, lesson page {result['lesson_bytes']:,} bytes")
    print(f"{'target':<16}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'x static':>10}")
    for name, t in result["targets"].items():
        print(f"{name:<16}{t['rps']:>10.0f}{t['p50_ms']:>10.2f}{t['p99_ms']:>10.2f}{t['ratio_to_static']:>10.2f}")
    floor, answer = result["targets"]["answer_floor"], result["targets"]["answer"]
    if floor["rps"] and answer["rps"]:
        print(
            f"answer floor (CSRF, session and user only): {floor['ratio_to_static']:.2f} of the ceiling; "
            f"the answer reaches {answer['rps'] / floor['rps']:.2f} of its floor"
        )
    print("queries per page: " + ", ".join(f"{k} {v}" for k, v in result["queries"].items()))
    print("calculator API, median server ms: " + ", ".join(f"{k} {v:.2f}" for k, v in result["api_server_ms"].items()))


def main() -> int:
    if shutil.which("wrk") is None:
        sys.exit("wrk is missing: apt-get install -y wrk")
    sys.path.insert(0, str(ROOT))
    from calculators.bench import time_evaluate, time_maths

    maths = {k: round(v, 2) for k, v in time_maths().items()}
    evaluate = {k: round(v, 2) for k, v in time_evaluate().items()}
    report = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "seconds_per_target": SECONDS,
        "connections": CONNECTIONS,
        "budgets": BUDGETS,
        "maths_median_us": maths,
        "evaluate_median_us": evaluate,
        "databases": {},
    }
    databases = {"sqlite": None}
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        databases["postgresql"] = os.environ["DATABASE_URL"]
    failures = []
    with tempfile.TemporaryDirectory(prefix="sil-bench-") as tmp:
        workdir = Path(tmp)
        for label, url in databases.items():
            database_url = url or f"sqlite:///{workdir / 'bench.sqlite3'}"
            result = run_database(label, database_url, workdir)
            report["databases"][label] = result
            print_report(label, result)
            failures += [f"{label}: {f}" for f in check_budgets(result, maths)]
    print("\ncalculator maths, median µs per call: " + ", ".join(f"{k} {v:.1f}" for k, v in maths.items()))
    print(
        "calculator evaluate (parse + maths + derivation), median µs: "
        + ", ".join(f"{k} {v:.0f}" for k, v in evaluate.items())
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    report["failures"] = failures
    (RESULTS / "latest.json").write_text(json.dumps(report, indent=2))
    print(f"\nwrote {RESULTS / 'latest.json'}")
    if failures:
        print("\nBUDGETS FAILED:\n- " + "\n- ".join(failures))
        return 1
    print("\nevery budget holds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
