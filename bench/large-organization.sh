#!/usr/bin/env bash
# Benchmark (issue 22, item 4): the suite inside a large organization others share, against the
# same run inside a small one. Starts `conform serve` on a loopback port, seeds organization
# `big` with WORKSPACES workspaces and TEAMS teams through the API (as other users would have
# made them) and an empty organization `small`, then runs the suite with `--organization big`
# and with `--organization small` under `/usr/bin/time -v`, and prints each run's wall time,
# requests, peak memory and verdict counts, and the ratio of the wall times; and what the
# run in `big` could not delete, if anything.
# Usage: bench/large-organization.sh [WORKSPACES] [TEAMS]   (default 2000 600)
# CONFORM_BIN=path runs another build of conform; COMPARE_BIN=path runs that build too, on the
# same seeded service, and prints its figures beside (to compare before and after a change).
set -euo pipefail
cd "$(dirname "$0")/.."
workspaces=${1:-2000}
teams=${2:-600}
token=bench-user
if [ -z "${CONFORM_BIN:-}" ]; then
  cargo build --release -q
  bin=./target/release/conform
else
  bin=$CONFORM_BIN
fi
out=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
. bench/serve.sh
serve_reference "$out" --token "$token" --admin-token bench-admin --seed-organization big

# Seeds: what others made, through the API, 16 at a time.
post() { # PATH JSON
  curl -s -o /dev/null -w '%{http_code}\n' -X POST "$url/api/v2$1" \
    -H "Authorization: Bearer $token" -H 'Content-Type: application/vnd.api+json' -d "$2"
}
export -f post
export url token
post /organizations '{"data":{"type":"organizations","attributes":{"name":"small","email":"bench@example.com"}}}' >/dev/null
seeded=$(date +%s.%N)
{
  seq "$workspaces" | sed 's/^/w /'
  seq "$teams" | sed 's/^/t /'
} | xargs -P 16 -n 2 bash -c '
  if [ "$0" = w ]; then
    post /organizations/big/workspaces "{\"data\":{\"type\":\"workspaces\",\"attributes\":{\"name\":\"others-ws-$1\"}}}"
  else
    post /organizations/big/teams "{\"data\":{\"type\":\"teams\",\"attributes\":{\"name\":\"others-team-$1\"}}}"
  fi' | sort | uniq -c | sed 's/^/seed answers: /'
echo "seeded $workspaces workspaces and $teams teams in $(echo "$(date +%s.%N) - $seeded" | bc) s"

run() { # ORGANIZATION [BINARY LABEL]
  local program=${2:-$bin} label=${3:-}
  local name=$1$label
  /usr/bin/time -v "$program" -q --target "$url" --token "$token" \
    --admin-token bench-admin --organization "$1" --reports "$out/$name" \
    >"$out/$name.txt" 2>"$out/$name.time" || true
  local wall peak counts
  wall=$(sed -n 's/^requests: .*wall time: \([0-9.]*\) s.*/\1/p' "$out/$name.txt")
  requests=$(sed -n 's/^requests: \([0-9]*\) .*/\1/p' "$out/$name.txt")
  peak=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out/$name.time")
  counts=$(grep '^total ' "$out/$name.txt" || echo "total (no summary)")
  printf '%-13s wall %8s s  requests %6s  peak %6s MB  %s\n' "$name" "$wall" "$requests" \
    "$((peak / 1024))" "$counts"
  echo "$wall" >"$out/$name.wall"
}
ratio() { # LABEL
  echo "wall time big$1 / small$1: $(echo "scale=2; $(cat "$out/big$1.wall") / $(cat "$out/small$1.wall")" | bc)" \
    "(issue 22: within 3x plus 10 s, peak under 64 MB, no false failure)"
}
if [ -n "${COMPARE_BIN:-}" ]; then
  run small "$COMPARE_BIN" "-compared"
  run big "$COMPARE_BIN" "-compared"
fi
run small
run big
[ -n "${COMPARE_BIN:-}" ] && ratio -compared
ratio ""
grep -h 'FAILED\|^    \[' "$out/big.txt" | head -20 || true
grep -h -A 20 '^could not delete' "$out/big.txt" || true
echo "reports: $out"
