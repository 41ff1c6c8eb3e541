#!/usr/bin/env bash
# Benchmark: the run against a rate-limited server (issue 43, item 5 (a)). `conform serve`
# with the fault rate-limit-per-second=LIMIT (a request after LIMIT others within one second
# answers 429, Retry-After: 1, as TFE does) is run against twice, in turn: with
# --no-rate-learning (each 429 waited out, as before issue 43) and with the pace learned.
# For each: the wall time, the requests, the 429s, the bound (requests taken / LIMIT, the
# least any client can take) and the ratio wall / bound, side by side.
# Usage: bench/rate-limit.sh [LIMIT] [CONFORM OPTIONS...]   (default 30; e.g. --group teams)
# CONFORM_BIN=path runs another build of conform; MODES=learned runs the learned pace alone
# (bench/time.sh does). The learned run's figures end in a `case:` line (bench/time.sh's row).
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-30}
shift || true
if [ -z "${CONFORM_BIN:-}" ]; then
  cargo build --release -q
  bin=./target/release/conform
else
  bin=$CONFORM_BIN
fi
out=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$out"' EXIT
. bench/serve.sh

echo "== the run against a server limited to ${limit}/s $*"
modes=${MODES:-unlearned learned}
for mode in $modes; do
  # a fresh server each time: nothing the first run made is in the second's way
  serve_reference "$out" --token bench-token --admin-token bench-admin \
    --fault "rate-limit-per-second=$limit"
  args=(-q --target "$url" --token bench-token --admin-token bench-admin --reports "$out/$mode")
  [ "$mode" = learned ] || args+=(--no-rate-learning)
  "$bin" "${args[@]}" "$@" >"$out/$mode.txt" 2>&1 || true
  grep -E '^test result' "$out/$mode.txt" || tail -5 "$out/$mode.txt"
  kill "${pids[-1]}" 2>/dev/null || true
done
python3 - "$out" "$limit" $modes <<'PY'
import json, sys
out, limit, modes = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
print(f"{'':10} {'wall':>8} {'requests':>9} {'429s':>6} {'bound':>8} {'ratio':>6} {'learned':>8}")
for mode in modes:
    f = json.load(open(f"{out}/{mode}/results.json"))["figures"]
    taken = f["requests"] - f["rate_limited_answers"]
    bound = taken / limit
    learned = f.get("learned_limit_per_second")
    learned = f"{learned:.1f}/s" if learned else "-"
    print(f"{mode:10} {f['wall_seconds']:7.1f}s {f['requests']:9} {f['rate_limited_answers']:6} "
          f"{bound:7.1f}s {f['wall_seconds'] / bound:5.2f}x {learned:>8}")
    if mode == "learned":
        print(f"case: (a) {limit:.0f}/s limit|{f['wall_seconds']:.1f}|{f['requests']}|{bound:.1f}|"
              f"requests taken / {limit:.0f}/s ({f['rate_limited_answers']} x 429)")
PY
