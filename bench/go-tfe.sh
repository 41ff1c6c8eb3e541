#!/usr/bin/env bash
# Benchmark: go-tfe's integration tests (conform peer go-tfe) against the embedded reference, in
# release mode, the test binary already built (the first run builds it and is not counted).
# Prints each run's wall time as the run's own summary gives it, and the median; the guide's
# figure (docs/guide/peer.md, "in about N s on two cores") is this median.
# Usage: bench/go-tfe.sh [RUNS]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
cargo build --release -q
out=$(mktemp -d)
./target/release/conform peer go-tfe --reports "$out/warmup" >/dev/null 2>&1 || true
for i in $(seq "$runs"); do
  ./target/release/conform peer go-tfe --reports "$out/$i" >"$out/run.txt" 2>/dev/null || { cat "$out/run.txt"; exit 1; }
  grep '^go-tfe v' "$out/run.txt" | sed 's/.* in \([0-9]*\) s;.*/\1/'
done | tee "$out/figures.txt"
sort -n "$out/figures.txt" | awk '{a[NR]=$1} END {print "median wall time: " a[int((NR+1)/2)] " s over " NR " runs"}'
