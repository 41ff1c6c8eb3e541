#!/usr/bin/env bash
# Benchmark: simple GETs per second the reference service serves, with wrk (Debian's package).
# Starts `conform serve` on a loopback port, makes one organization, then loads
# GET /api/v2/organizations/:name for 10 s with 2 threads and 64 connections.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
cargo build --release -q
port=$((20000 + RANDOM % 20000))
./target/release/conform serve --port "$port" --token bench-token >/dev/null &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 50); do curl -s "http://127.0.0.1:$port/.well-known/terraform.json" >/dev/null && break; sleep 0.1; done
curl -s -X POST "http://127.0.0.1:$port/api/v2/organizations" \
  -H 'Authorization: Bearer bench-token' -H 'Content-Type: application/vnd.api+json' \
  --data '{"data":{"type":"organizations","attributes":{"name":"bench","email":"b@bench.test"}}}' >/dev/null
wrk -t2 -c64 -d10s -H 'Authorization: Bearer bench-token' "http://127.0.0.1:$port/api/v2/organizations/bench"
