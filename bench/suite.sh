#!/usr/bin/env bash
# Benchmark: the full suite against the embedded reference service, in release mode.
# Prints each run's wall time and requests/s (from the run's own summary) and the median.
# Usage: bench/suite.sh [RUNS]   (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
cargo build --release -q
out=$(mktemp -d)
for i in $(seq "$runs"); do
  ./target/release/conform -q --reports "$out" >"$out/run.txt" 2>&1 || { cat "$out/run.txt"; exit 1; }
  grep '^requests:' "$out/run.txt"
done | tee "$out/figures.txt"
awk '{print $5}' "$out/figures.txt" | sort -n | awk '{a[NR]=$1} END {print "median wall time: " a[int((NR+1)/2)] " s over " NR " runs"}'
