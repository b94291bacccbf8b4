"""Time the fleet simulator: 100,000 requests over 64 replicas with all five routing policies.

`python -m bench.simulator` prints the best and the median of three runs, in seconds, and the
best CPU time, as JSON;
`make bench` reports the line (issue 17's budget: at most 2 s on a 2-core machine).
"""

from __future__ import annotations

import json
import statistics
import time

from calculators.simulation import ROUTING_POLICIES, RoutingSetup, simulate_routing

SETUP = RoutingSetup(replicas=64, requests=100_000, seed=1)
BUDGET_S = 2.0


def measure(runs: int = 3) -> dict:
    """Return wall-clock seconds (best, median) and this process's CPU seconds (best) of `runs` runs.

    On a machine busy with other work the wall clock grows while the CPU time
    stays what one run costs; both are reported.
    """
    wall, cpu = [], []
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        simulate_routing(SETUP, ROUTING_POLICIES)
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return {"best_s": min(wall), "median_s": statistics.median(wall), "cpu_s": min(cpu), "budget_s": BUDGET_S,
            "requests": SETUP.requests, "replicas": SETUP.replicas, "policies": len(ROUTING_POLICIES)}  # fmt: skip


if __name__ == "__main__":
    print(json.dumps(measure()))
