#!/usr/bin/env bash
# Benchmark (issue 43, item 5): where a run's time goes against three kinds of slow target,
# side by side in one call (the three cases run at once; each mostly waits), in a release
# build. For each case: the run's wall time, its requests, the least a client needs (its
# bound), and the ratio wall / bound.
#   (a) the reference limited to LIMIT requests/s (bench/rate-limit.sh, the learned pace
#       alone): bound = requests taken (not answered 429) / LIMIT;
#   (b) the embedded reference whose relationship endpoints do nothing, so a team's member
#       list never shows the member (--reference-fault relationship-noop, at --profile tfe as
#       on the server that never lists members): bound = the same run without the fault plus
#       one consistency window (5 s, or --consistency-window's), what a client needs that
#       waits only where a wait can change a verdict and waits a wait several tests share
#       once;
#   (c) the reference behind a proxy answering DELAY_MS late (bench/distance.sh):
#       bound = requests x latency / threads (16, or --test-threads').
# Usage: bench/time.sh [CONFORM OPTIONS...]   (e.g. --group teams,sequences; the whole run
# when none). LIMIT=30 and DELAY_MS=100 by default; CONFORM_BIN=path runs another build.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${LIMIT:-30}
delay=${DELAY_MS:-100}
if [ -z "${CONFORM_BIN:-}" ]; then
  cargo build --release -q
  export CONFORM_BIN=$PWD/target/release/conform
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# member_list: case (b), its two runs one after the other
member_list() {
  local name
  for name in plain fault; do
    local args=(-q --profile tfe --reports "$out/b-$name")
    [ "$name" = plain ] || args+=(--reference-fault relationship-noop)
    "$CONFORM_BIN" "${args[@]}" "$@" >"$out/b-$name.txt" 2>&1 || true
  done
  grep -A 6 '^slowest tests' "$out/b-fault.txt" || true
  python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
plain, fault = (json.load(open(f"{out}/b-{n}/results.json"))["figures"] for n in ("plain", "fault"))
window = fault["consistency"]["window_seconds"]
bound = plain["wall_seconds"] + window
print(f"case: (b) member never listed|{fault['wall_seconds']:.1f}|{fault['requests']}|{bound:.1f}|"
      f"the run without the fault ({plain['wall_seconds']:.1f} s) + one {window:g} s window")
PY
}

echo "== three slow targets at once: ${limit}/s, a member list that never shows the member, ${delay} ms away $*"
MODES=learned bench/rate-limit.sh "$limit" "$@" >"$out/a.txt" 2>&1 &
a=$!
member_list "$@" >"$out/b.txt" 2>&1 &
b=$!
bench/distance.sh "$delay" "$@" >"$out/c.txt" 2>&1 &
c=$!
wait $a $b $c || true
for case in a b c; do
  echo "-- ($case)"
  grep -v '^case: ' "$out/$case.txt" || true
done
echo
printf '%-24s %8s %9s %8s %6s  %s\n' case wall requests bound ratio "bound is"
cat "$out"/[abc].txt | sed -n 's/^case: //p' | while IFS='|' read -r name wall requests bound how; do
  ratio=$(awk -v w="$wall" -v b="$bound" 'BEGIN {printf "%.2f", w / b}')
  printf '%-24s %7ss %9s %7ss %5sx  %s\n' "$name" "$wall" "$requests" "$bound" "$ratio" "$how"
done
