"""Settings read from the environment through helpers that refuse bad values."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from interview.env import envbool, envint, envlist, envurl

ROOT = Path(__file__).resolve().parents[2]


def test_envbool(monkeypatch):
    monkeypatch.setenv("FLAG", "yes")
    assert envbool("FLAG", False) is True
    monkeypatch.setenv("FLAG", "off")
    assert envbool("FLAG", True) is False
    monkeypatch.setenv("FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="FLAG='maybe' is not a boolean"):
        envbool("FLAG", False)


def test_envint(monkeypatch):
    monkeypatch.setenv("N", "12")
    assert envint("N", 1) == 12
    monkeypatch.setenv("N", "twelve")
    with pytest.raises(ImproperlyConfigured, match="not a whole number"):
        envint("N", 1)
    monkeypatch.setenv("N", "-1")
    with pytest.raises(ImproperlyConfigured, match="below the minimum"):
        envint("N", 1, minimum=0)


def test_envlist_and_envurl(monkeypatch):
    monkeypatch.setenv("HOSTS", "a.example, b.example,,")
    assert envlist("HOSTS", []) == ["a.example", "b.example"]
    monkeypatch.setenv("URL", "mysql://x")
    with pytest.raises(ImproperlyConfigured, match="must start with one of"):
        envurl("URL", ("postgres",))


def run_django(env: dict, *args: str) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DEBUG", "SECRET_KEY", "DJANGO_SETTINGS_MODULE", "HTTPS", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_secret_key_is_required_when_debug_is_off():
    result = run_django({"DEBUG": "false"}, "check")
    assert result.returncode != 0
    assert "SECRET_KEY is required when DEBUG is off" in result.stderr


def test_production_environment_passes_check_deploy():
    env = {
        "DEBUG": "false",
        "SECRET_KEY": "k3y-" + "x7Qz9!" * 10,
        "ALLOWED_HOSTS": "lab.example.com",
    }
    result = run_django(env, "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_mistyped_rate_limit_stops_start_up():
    result = run_django({"DEBUG": "true", "THROTTLE_LOGIN_ACCOUNT": "100/fortnight"}, "check")
    assert result.returncode != 0
    assert "Rate '100/fortnight' is not like '10/min'" in result.stderr
