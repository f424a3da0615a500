#!/usr/bin/env bash
# Crowds of 10, 30 and 60 hexd on one bridge (crowd.sh), one after the other: for each, the time
# until every daemon lists every other and the CPU of all daemons together at steady state over
# SECONDS (20 by default), then both as ratios against the 10 daemons measured in the same run.
# A benchmark: it prints figures and enforces nothing beyond what crowd.sh checks.
#
# Usage: crowd-bench.sh BIN_DIR [SECONDS]   (needs root and iproute2)
set -euo pipefail
bin=${1:?usage: crowd-bench.sh BIN_DIR [SECONDS]}
seconds=${2:-20}
results=()
for count in 10 30 60; do
    out=$(bash "$(dirname "$0")/crowd.sh" "$bin" "$count" "$seconds")
    echo "$out" | grep -E "each once|steady state"
    converged=$(echo "$out" | sed -n 's/.*each once, \([0-9]*\) ms after.*/\1/p')
    cpu=$(echo "$out" | sed -n 's/.*steady state over [0-9]* s: \([0-9.]*\) % of a core.*/\1/p')
    results+=("$count $converged $cpu")
done
printf '%s\n' "${results[@]}" | python3 -c 'import sys
rows = [line.split() for line in sys.stdin]
base = rows[0]
for count, ms, cpu in rows:
    print(f"crowd-bench: {count} daemons: all listed in {ms} ms ({int(ms) / int(base[1]):.2f} x 10 daemons), "
          f"steady CPU {cpu} % of a core ({float(cpu) / max(float(base[2]), 1e-9):.2f} x 10 daemons)")'
