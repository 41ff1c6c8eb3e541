#!/usr/bin/env bash
# Benchmark (issue 22, item 4): the suite inside a large organization others share, against the
# same run inside a small one. Starts `conform serve` on a loopback port, seeds organization
# `big` with WORKSPACES workspaces and TEAMS teams through the API (as other users would have
# made them) and an empty organization `small`, then runs the suite with `--organization big`
# and with `--organization small` under `/usr/bin/time -v`, and prints each run's wall time,
# requests, peak memory and verdict counts, and the ratio of the wall times.
# Usage: bench/large-organization.sh [WORKSPACES] [TEAMS]   (default 2000 600)
set -euo pipefail
cd "$(dirname "$0")/.."
workspaces=${1:-2000}
teams=${2:-600}
token=bench-user
cargo build --release -q
out=$(mktemp -d)
./target/release/conform serve --port 0 --token "$token" --admin-token bench-admin \
  --seed-organization big >"$out/serve.txt" 2>&1 &
served=$!
trap 'kill "$served" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  grep -q '^reference service at ' "$out/serve.txt" 2>/dev/null && break
  sleep 0.1
done
url=$(sed -n 's/^reference service at //p' "$out/serve.txt" | head -1)
[ -n "$url" ] || { cat "$out/serve.txt"; exit 1; }

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

run() { # ORGANIZATION
  /usr/bin/time -v ./target/release/conform -q --target "$url" --token "$token" \
    --admin-token bench-admin --organization "$1" --reports "$out/$1" \
    >"$out/$1.txt" 2>"$out/$1.time" || true
  local wall peak counts
  wall=$(sed -n 's/^requests: .*wall time: \([0-9.]*\) s.*/\1/p' "$out/$1.txt")
  requests=$(sed -n 's/^requests: \([0-9]*\) .*/\1/p' "$out/$1.txt")
  peak=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out/$1.time")
  counts=$(grep '^total ' "$out/$1.txt" || echo "total (no summary)")
  printf '%-6s wall %8s s  requests %6s  peak %6s MB  %s\n' "$1" "$wall" "$requests" \
    "$((peak / 1024))" "$counts"
  echo "$wall" >"$out/$1.wall"
}
run small
run big
echo "wall time big / small: $(echo "scale=2; $(cat "$out/big.wall") / $(cat "$out/small.wall")" | bc)" \
  "(issue 22: within 3x plus 10 s, peak under 64 MB, no false failure)"
grep -h 'FAILED\|^    \[' "$out/big.txt" | head -20 || true
echo "reports: $out"
