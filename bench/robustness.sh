#!/usr/bin/env bash
# Benchmark: what a hostile or strict server costs a run, side by side in one call.
#   1. peak memory of a run against a server whose shows and lists answer 1 GiB each;
#   2. a run at --rate 25/s against a server that refuses the 26th request in any second:
#      429 answers received (0 is the target) and the rate achieved;
#   3. the crash-safe ledger's cost: the whole suite against `conform serve` with the ledger
#      on disk, paired with the same run with the ledger in memory (/dev/shm);
#   4. the harness against a load tool: the suite's requests/s at its 16 concurrent tests,
#      and wrk's on one show at 16 connections against the same server.
# Needs farm-bench (the tool library) and wrk (Debian's package; installed when missing).
# Usage: bench/robustness.sh [RUNS]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
cargo build --release -q
bin=./target/release/conform
out=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT

# serve NAME ARGS...: starts `conform serve`, sets $url
serve() {
  local name=$1
  shift
  "$bin" serve --port 0 --token bench-token --admin-token bench-admin "$@" >"$out/$name.serve" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    url=$(sed -n 's/^reference service at //p' "$out/$name.serve")
    [ -n "$url" ] && return
    sleep 0.05
  done
  echo "conform serve did not start" >&2
  exit 1
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "== 1. peak memory against 1 GiB answers (default --max-body 8 MiB)"
huge=()
for route in "GET /organizations/:organization_name" "GET /organizations" \
  "GET /runs/:run_id" "GET /teams/:team_id" "GET /workspaces/:workspace_id/vars" \
  "GET /policy-sets/:policy_set_id"; do
  huge+=(--fault "huge-body=$route")
done
serve huge "${huge[@]}"
farm-bench -n "$runs" --timeout 900 -- sh -c "exec $bin --target $url --token bench-token --admin-token bench-admin --cases 4 --reports $out/huge >>$out/huge.txt 2>&1" | tee "$out/memory.txt"

echo "== 2. --rate 25/s against a server limiting at 25/s"
serve limited --fault rate-limit-per-second=25
"$bin" --target "$url" --token bench-token --admin-token bench-admin --group organizations,teams \
  --rate 25/s --reports "$out/rate" >"$out/rate.txt" 2>&1 || true
python3 - "$out/rate/results.json" <<'EOF'
import json, sys
f = json.load(open(sys.argv[1]))["figures"]
print(f"429 answers: {f['rate_limited_answers']}  requests: {f['requests']}  "
      f"rate achieved: {f['requests'] / f['wall_seconds']:.1f}/s (limit 25/s)")
EOF

echo "== 3. the ledger on disk (A) against the ledger in memory (B), whole suite"
serve plain
farm-bench -n "$runs" --timeout 1800 \
  --vs "sh -c 'exec $bin -q --target $url --token bench-token --admin-token bench-admin --reports $out/b --ledger /dev/shm/conform-bench-ledger.jsonl >>$out/b.txt 2>&1'" \
  -- sh -c "exec $bin -q --target $url --token bench-token --admin-token bench-admin --reports $out/a --ledger $out/ledger.jsonl >>$out/a.txt 2>&1"
rm -f /dev/shm/conform-bench-ledger.jsonl

echo "== 4. the suite's requests/s against wrk's, same server, 16 at a time"
suite_rate=$(grep -h '^requests:' "$out/a.txt" | awk '{print $8}' | median)
curl -s -X POST "$url/api/v2/organizations" -H 'Authorization: Bearer bench-token' \
  -H 'Content-Type: application/vnd.api+json' \
  --data '{"data":{"type":"organizations","attributes":{"name":"bench-wrk","email":"b@bench.test"}}}' >/dev/null
wrk_rate=$(wrk -t2 -c16 -d5s -H 'Authorization: Bearer bench-token' "$url/api/v2/organizations/bench-wrk" |
  awk '/Requests\/sec/ {print $2}')
python3 -c "s=float('$suite_rate'); w=float('$wrk_rate'); print(f'suite: {s:.0f} requests/s (16 tests)  wrk: {w:.0f} requests/s (16 connections, one show)  wrk/suite: {w/s:.2f}x')"
