#!/usr/bin/env bash
# Run every benchmark in the repository, then redraw the plots and refresh the figures
# in docs/benchmarks.md. One command:
#
#   scripts/run_benchmarks.sh              # everything (the moto benchmark alone takes minutes)
#   scripts/run_benchmarks.sh cli fleet_core planner_scaling   # only these, then plots
#
# Names are the script names without "bench_" and ".py" (cli, estimate, refresh, tui,
# cloud_calls, stop_idle, org_scale, fleet_core, planner_scaling) plus "simulation"
# (scripts/simulate_sweep.py). Every scripts/bench_*.py is picked up automatically.
# Each script writes its own benchmarks/results/*.md; scripts/plot_benchmarks.py reads
# those and writes docs/img/bench-*.png. Needs the test and docs extras:
#   pip install -e '.[test,docs]'
# A benchmark that fails is reported at the end and the others still run (exit 1).
# The slow ones: stop_idle (moto scans every datapoint), org_scale (serial runs sleep
# through 150 ms per call), simulation (the sweep) and estimate (every GPU count
# 1..1024); their docstrings say how long to expect.
set -u
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"

declare -a names=()
for script in scripts/bench_*.py; do
    name="${script#scripts/bench_}"
    names+=("${name%.py}")
done
names+=("simulation")
if [ "$#" -gt 0 ]; then
    names=("$@")
fi

failed=()
for name in "${names[@]}"; do
    if [ "$name" = "simulation" ]; then
        script="scripts/simulate_sweep.py"
    else
        script="scripts/bench_${name}.py"
    fi
    if [ ! -f "$script" ]; then
        echo "run_benchmarks: no such benchmark: $name ($script)" >&2
        failed+=("$name")
        continue
    fi
    echo "=== $script (load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'))"
    start=$(date +%s)
    if ! "$PYTHON" "$script" >/dev/null; then
        failed+=("$name")
    fi
    echo "    $(( $(date +%s) - start )) s"
done

echo "=== scripts/plot_benchmarks.py"
"$PYTHON" scripts/plot_benchmarks.py || failed+=("plots")

if [ "${#failed[@]}" -gt 0 ]; then
    echo "run_benchmarks: failed: ${failed[*]}" >&2
    exit 1
fi
echo "run_benchmarks: done; results in benchmarks/results/, plots in docs/img/"
