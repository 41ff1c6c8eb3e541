#!/usr/bin/env bash
# Benchmark: the run at a distance. A proxy (bench/delay_proxy.py, Python's standard library)
# answers every request DELAY_MS late in front of `conform serve`; the run goes through it
# with --target. Prints the wall time, the requests, the lower bound
# requests x latency / threads, the ratio of the two, and the run's peak memory
# (/usr/bin/time -v, maximum resident set size); and what teardown could not delete, if any.
# Usage: bench/distance.sh [DELAY_MS] [CONFORM OPTIONS...]   (default 100 ms; e.g. --group sequences)
# CONFORM_BIN=path runs another build of conform (to compare before and after a change).
# The figures end in a `case:` line (bench/time.sh's row).
set -euo pipefail
cd "$(dirname "$0")/.."
delay=${1:-100}
shift || true
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
threads=$(option test-threads 16 "$@")

serve_reference "$out" --token bench-token --admin-token bench-admin
port=${url##*:}
port=${port%%/*}
python3 bench/delay_proxy.py "$port" "$delay" >"$out/proxy.txt" 2>&1 &
pids+=($!)
proxy=$(said "$out/proxy.txt" 'listening on ')

echo "== the run through a proxy answering ${delay} ms late ($threads threads) $*"
/usr/bin/time -v -o "$out/time.txt" "$bin" -q --target "http://127.0.0.1:$proxy" \
  --token bench-token --admin-token bench-admin --reports "$out/reports" "$@" >"$out/run.txt" 2>&1 || true
grep -E '^(test result|requests:)' "$out/run.txt" || tail -5 "$out/run.txt"
grep -A 20 '^could not delete' "$out/run.txt" || true
python3 - "$out/reports/results.json" "$out/time.txt" "$delay" "$threads" <<'PY'
import json, re, sys
report = json.load(open(sys.argv[1]))
figures = report["figures"]
peak_kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(sys.argv[2]).read()).group(1))
delay, threads = int(sys.argv[3]) / 1000, int(sys.argv[4])
wall, requests = figures["wall_seconds"], figures["requests"]
bound = requests * delay / threads
print(f"wall {wall:.1f} s  requests {requests}  bound {bound:.1f} s (requests x {delay * 1000:.0f} ms / {threads})  "
      f"ratio {wall / bound:.2f}x  peak {peak_kib / 1024:.0f} MB")
print(f"case: (c) {delay * 1000:.0f} ms away|{wall:.1f}|{requests}|{bound:.1f}|requests x {delay * 1000:.0f} ms / {threads} threads")
for t in sorted(report["tests"], key=lambda t: -t["duration_ms"])[:5]:
    print(f"  slowest: {t['name']} {t['duration_ms'] / 1000:.1f} s, {t['requests']} requests, {t['verdict']}")
PY
