#!/usr/bin/env bash
# Benchmark: what the consistency window costs the embedded run (issue 31: "the window only
# costs time on the failure path"). The whole suite against the embedded reference service,
# with --consistency-window 0 (every observation read once) and with the default window, in
# turn (0, default, 0, default, ...) so that a drift of the machine's speed touches both alike.
# Prints each run's wall time from the run's own summary, then each side's median.
# Usage: bench/consistency.sh [PAIRS]   (default 5; CONFORM_BIN=path skips the build)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-5}
bin=${CONFORM_BIN:-./target/release/conform}
[ -n "${CONFORM_BIN:-}" ] || cargo build --release -q
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for i in $(seq "$pairs"); do
  for window in 0 default; do
    args=(-q --reports "$out/r")
    [ "$window" = default ] || args+=(--consistency-window "$window")
    "$bin" "${args[@]}" >"$out/run.txt" 2>&1 || { cat "$out/run.txt"; exit 1; }
    wall=$(awk '/^requests:/ {print $5}' "$out/run.txt")
    echo "pair $i window $window: $wall s"
    echo "$window $wall" >>"$out/figures.txt"
  done
done
for window in 0 default; do
  awk -v w="$window" '$1 == w {print $2}' "$out/figures.txt" | sort -n |
    awk -v w="$window" '{a[NR]=$1} END {print "window " w ": median wall time " a[int((NR+1)/2)] " s over " NR " runs"}'
done
