#!/usr/bin/env bash
# ./tally demo: the whole path on the local stack. Brings the stack up, starts ingest-app (both roles)
# and read-service in the background, produces events with loadgen, waits until read-service serves
# the bucket, and prints it with the curl command that fetched it. Stops everything at the end, or on
# Ctrl-C, unless --keep-running.
set -euo pipefail
# shellcheck source=lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

KEEP_RUNNING=0
EVENTS=${TALLY_DEMO_EVENTS:-20}
for arg in "$@"; do
  case $arg in
    --keep-running) KEEP_RUNNING=1 ;;
    -h|--help) sed -n '2,6s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown option '$arg' (try ./tally demo --help)" ;;
  esac
done

READ_PORT=${TALLY_READ_HTTP_PORT:-8080}
# Each run is its own tenant, so its buckets hold exactly this run's events even when the stack still
# holds events of earlier runs in the same hour.
DOMAIN=${TALLY_DEMO_DOMAIN:-demo-$(date -u +%Y%m%d-%H%M%S)}
LOGS=$STATE/logs
TALLY=$TALLY_ROOT/tally
PIDS=()

stop_apps() {
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  PIDS=()
}

finish() {
  local rc=$?
  trap - EXIT INT TERM
  if ((KEEP_RUNNING && rc == 0)); then
    say "left running (--keep-running): ingest-app pid ${PIDS[0]:-?}, read-service pid ${PIDS[1]:-?}; stop with: kill ${PIDS[*]:-} && ./tally stack down"
    exit 0
  fi
  say "stopping ingest-app and read-service ..."
  stop_apps
  "$TALLY_ROOT/local/stack.sh" down || true
  exit "$rc"
}
trap finish EXIT
trap 'say "interrupted"; exit 130' INT TERM

step() { say ""; say "==> $*"; }

step "1/5 local stack (Kafka, schema registry, local Cosmos)"
"$TALLY_ROOT/local/stack.sh" up
"$TALLY" build

step "2/5 ingest-app (aggregation + Cosmos sink), log: ${LOGS#$TALLY_ROOT/}/ingest.log"
mkdir -p "$LOGS"
"$TALLY" ingest --ingest.state-dir="$STATE/streams" >"$LOGS/ingest.log" 2>&1 &
PIDS+=($!)

step "3/5 read-service on http://127.0.0.1:$READ_PORT, log: ${LOGS#$TALLY_ROOT/}/read.log"
"$TALLY" serve --read.http.port="$READ_PORT" >"$LOGS/read.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 120); do
  http_ok "http://127.0.0.1:$READ_PORT/health/live" && break
  kill -0 "${PIDS[1]}" 2>/dev/null || die "read-service exited; see $LOGS/read.log"
  sleep 0.5
done
http_ok "http://127.0.0.1:$READ_PORT/health/live" || die "read-service did not come up; see $LOGS/read.log"

step "4/5 loadgen: $EVENTS events for domain $DOMAIN"
# Only valid, unique, APPROVED events in the first minute of this hour, over 5 customers: each customer's total
# is then exactly its `spend-per-customer` hour bucket (rules/default-rules.yaml).
out=$("$TALLY" loadgen --loadgen.events="$EVENTS" --loadgen.domain="$DOMAIN" --loadgen.seed="$RANDOM" \
  --loadgen.customers=5 --loadgen.start="$(date -u +%Y-%m-%dT%H:00:00Z)" --loadgen.window.ms=60000 \
  --loadgen.duplicate.fraction=0 --loadgen.late.fraction=0 --loadgen.future.fraction=0 \
  --loadgen.malformed.fraction=0 --loadgen.invalid.fraction=0 --loadgen.declined.fraction=0 \
  --loadgen.refunded.fraction=0 --loadgen.rules-file="$TALLY_ROOT/rules/default-rules.yaml" \
  --loadgen.ground-truth-file="$STATE/loadgen/demo-ground-truth.json" 2>>"$LOGS/loadgen.log") \
  || die "loadgen failed; see $LOGS/loadgen.log"
printf '%s\n' "$out"
hour=$(sed -n 's/.*(hour bucket \([0-9]*\)).*/\1/p' <<<"$out")
first=$(sed -n 's/^  \(c-[0-9]*\) spent \([0-9.]*\)$/\1 \2/p' <<<"$out" | head -n 1)
customer=${first%% *} expected=${first##* }
[[ -n $hour && -n $customer ]] || die "could not read loadgen's summary"

step "5/5 waiting for read-service to serve the bucket of $customer"
body=""
for _ in $(seq 1 120); do
  url="http://127.0.0.1:$READ_PORT/v1/buckets/$DOMAIN%7C$customer/spend-per-customer%7Chour%7C$hour"
  if body=$(curl -fsS "$url" 2>/dev/null); then
    sum=$(sed -n 's/.*"sum":\([0-9.eE+-]*\).*/\1/p' <<<"$body")
    # Compare as numbers: the document may carry 12.5 where loadgen printed 12.5000.
    awk -v a="${sum:-x}" -v b="$expected" 'BEGIN { exit !(a == b + 0) }' && break
  fi
  body=""
  kill -0 "${PIDS[0]}" 2>/dev/null || die "ingest-app exited; see $LOGS/ingest.log"
  sleep 0.5
done
[[ -n $body ]] || die "the bucket did not reach read-service within 60 s (expected sum $expected); see $LOGS/ingest.log"

say ""
say "read-service answered (curl -s '$url'):"
printf '%s\n' "$body"
say ""
say "loadgen's ground truth for $customer: $expected — the bucket matches."
