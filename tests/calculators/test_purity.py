"""The maths, the registry and the charts never import Django or DRF."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_pure_modules_do_not_import_django():
    code = (
        "import sys\n"
        "import calculators.maths, calculators.registry, calculators.charts, calculators.formatting\n"
        "import calculators.calculator, calculators.definitions.assumptions\n"
        "import calculators.errors\n"
        "import calculators.simulation, calculators.simulator, calculators.simulator_charts\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'rest_framework'))))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, check=True
    )
    assert completed.stdout.strip() == ""
