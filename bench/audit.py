"""make audit: Lighthouse (npm, pinned) on the five page types, served as production serves them.

Accessibility and best practices must score 100 and performance at least 95, or the run fails.
The app runs under gunicorn with DEBUG off on a scratch SQLite file with the shipped content.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import servers

ROOT = servers.ROOT
LIGHTHOUSE = ROOT / ".audit" / "node_modules" / ".bin" / "lighthouse"
PAGES = {
    "home": "/",
    "lesson": "/lessons/llm-serving-platform/",
    "calculator": "/calculators/kv-cache/",
    "results": "/results/",
    "review": "/review/",
}
FLOORS = {"accessibility": 1.0, "best-practices": 1.0, "performance": 0.95}


def main() -> int:
    scratch = Path(tempfile.mkdtemp(prefix="sil-audit-"))
    env = servers.settings_env(f"sqlite:///{scratch / 'audit.sqlite3'}", scratch / "static")
    for command in (["migrate", "-v0"], ["load_content"], ["render_markup"], ["collectstatic", "--noinput", "-v0"]):
        subprocess.run(
            [sys.executable, "manage.py", *command], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL
        )
    with servers.gunicorn(env, app="interview.wsgi:application") as (base, _master):
        failures = []
        print(f"{'page':<12}{'performance':>13}{'accessibility':>15}{'best-practices':>16}")
        for name, path in PAGES.items():
            scores = audit(f"{base}{path}", scratch / f"{name}.json")
            print(f"{name:<12}" + "".join(f"{round(scores[c] * 100):>{w}}" for c, w in
                                          (("performance", 13), ("accessibility", 15), ("best-practices", 16))))  # fmt: skip
            failures += [f"{name}: {c} {round(scores[c] * 100)} < {round(f * 100)}" for c, f in FLOORS.items()
                         if scores[c] < f]  # fmt: skip
    print(f"Reports: {scratch}/*.json")
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


def audit(url: str, report: Path) -> dict[str, float]:
    subprocess.run(
        [str(LIGHTHOUSE), url, "--quiet", "--output=json", f"--output-path={report}",
         "--only-categories=performance,accessibility,best-practices",
         "--chrome-flags=--headless=new --no-sandbox --disable-gpu"],
        env={**os.environ, "CHROME_PATH": os.environ.get("CHROME_PATH", "/usr/bin/chromium")},
        check=True,
    )  # fmt: skip
    categories = json.loads(report.read_text())["categories"]
    return {name: categories[name]["score"] or 0.0 for name in FLOORS}


if __name__ == "__main__":
    sys.exit(main())
