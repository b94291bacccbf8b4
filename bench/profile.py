"""Profile one `make bench` target in-process: where a request's CPU goes, function by function.

    python -m bench.profile lesson_signed_in            # 50 requests under cProfile, top 40 by own time
    python -m bench.profile answer --requests 200 --sort cumulative --top 60
    python -m bench.profile results_full_history --time  # CPU ms per request only, no profiler
    python -m bench.profile answer --time --database-url postgres://postgres@127.0.0.1:5432/profile
    python -m bench.profile answer --queries             # the SQL of one request, statement by statement

The first run prepares a scratch SQLite database as `make bench` does (bench/prepare.py, about a
minute) in $TMPDIR/sil-profile (``--dir`` to choose); later runs on the same database reuse it,
``--fresh`` or another ``--database-url`` prepares it again (a PostgreSQL database: created empty).
Requests go through the Django test client with the bench's settings (DEBUG off, the full
middleware stack, CSRF enforced) and its plan's cookies, so they do what wrk's do, without HTTP.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import servers


def prepare(workdir: Path, env: dict) -> None:
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    print(f"preparing {workdir} (migrate, content, learners' histories)...", file=sys.stderr)
    subprocess.run(
        [sys.executable, "-m", "bench.prepare", str(workdir / "plan.json"), time.strftime("%Y%m%d%H%M%S")],
        cwd=servers.ROOT,
        env=env,
        check=True,
    )


def sender(plan: dict, name: str):
    """Return a function that sends the target's requests in turn, as bench/requests.lua does."""
    from django.test import Client

    clients, queue = {}, []
    for request in plan["requests"][name]:
        client = clients.get(request["cookie"])
        if client is None:
            client = clients[request["cookie"]] = Client(enforce_csrf_checks=True)
            if clients:  # one handler: the middleware (WhiteNoise scans the static files) loads once
                client.handler = next(iter(clients.values())).handler
            if request["cookie"]:
                client.cookies.load(request["cookie"])
        queue.append((client, request))
    position = 0

    def send():
        nonlocal position
        client, request = queue[position % len(queue)]
        position += 1
        if request["method"] == "GET":
            response = client.get(request["path"])
        else:
            response = client.post(
                request["path"],
                request.get("body", ""),
                content_type="application/x-www-form-urlencoded",
                HTTP_X_CSRFTOKEN=plan["csrf_token"],
                HTTP_HX_REQUEST="true",
            )
        if not 200 <= response.status_code < 300:
            sys.exit(f"{request['method']} {request['path']} answered {response.status_code}")

    return send


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", help="a target of bench/run.py, e.g. lesson_signed_in, answer, floor_get")
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--sort", default="tottime", help="a pstats sort key: tottime, cumulative, ncalls")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--dir", default=str(Path(tempfile.gettempdir()) / "sil-profile"))
    parser.add_argument("--fresh", action="store_true", help="prepare the database again")
    parser.add_argument(
        "--database-url", help="profile on this database (PostgreSQL: created empty, then filled) instead of SQLite"
    )
    parser.add_argument("--time", action="store_true", help="measure CPU per request only, without the profiler")
    parser.add_argument("--queries", action="store_true", help="print the SQL one request runs, and stop")
    parser.add_argument("--save", help="write the raw profile here (for snakeviz, gprof2dot, ...)")
    args = parser.parse_args()

    workdir = Path(args.dir)
    database = args.database_url or f"sqlite:///{workdir / 'bench.sqlite3'}"
    env = servers.settings_env(database, workdir / "static")
    prepared_on = workdir / "database.txt"  # the database the plan's learners and cookies live in
    if args.fresh or not prepared_on.exists() or prepared_on.read_text() != database:
        prepare(workdir, env)
        prepared_on.write_text(database)
    os.environ.update(env)
    import bench.floor_wsgi  # noqa: F401 - django.setup() and the bench's URLs, as gunicorn serves them

    plan = json.loads((workdir / "plan.json").read_text())
    send = sender(plan, args.target)
    for _ in range(5):  # templates compiled, the connection opened
        send()
    if args.queries:
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as captured:
            send()
        for number, query in enumerate(captured.captured_queries, 1):
            print(f"{number:>3}. {query['sql']}")
        return
    gc.freeze()  # as interview/wsgi.py does
    started = time.process_time()
    profiler = None if args.time else cProfile.Profile()
    if profiler:
        profiler.enable()
    for _ in range(args.requests):
        send()
    if profiler:
        profiler.disable()
    cpu_ms = (time.process_time() - started) * 1000 / args.requests
    print(f"{args.target}: {cpu_ms:.2f} ms CPU per request{' (under the profiler)' if profiler else ''}")
    if profiler:
        if args.save:
            profiler.dump_stats(args.save)
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.top)


if __name__ == "__main__":
    main()
