#!/usr/bin/env bash
# Usage: ./tally demo [--keep-running] [--two-schemas] | --attach --metrics-url=URL --read-url=URL --loadgen-jar=PATH
#
# ./tally demo: the whole path, live. Brings the local stack up, starts ingest-app (both roles) and
# read-service, and runs loadgen in the background: a few thousand events over the last hours, with a
# burst. One progress line per second shows events produced and ingested, bucket updates, documents
# written, consumer lag, request units per second and 429s. Once the pipeline has drained it prints a
# summary and three example queries (curl commands with read-service's answers, checked against
# loadgen's ground truth). Stops everything at the end or on Ctrl-C (exit 130) unless --keep-running.
#
#   --keep-running       leave the stack, ingest-app and read-service up (prints how to stop them)
#   --two-schemas        two topics, two schemas into one container: half the events as a shop's own nested
#                        OrderEvent on the topic orders, read through rules/two-schema-sources.yaml (docs/sources.md)
#   --attach             start nothing: drive services that already run (docker-compose.yml's demo
#                        service), given by --metrics-url, --read-url, --loadgen-jar [--show-read-url]
#
# Tuning (environment): TALLY_DEMO_RATE events/s (150), TALLY_DEMO_SECONDS (20), TALLY_DEMO_BURST factor
# (4, for a fifth of the run), TALLY_DEMO_HOURS of event time (4), TALLY_DEMO_CUSTOMERS (1000),
# TALLY_DEMO_RU_BUDGET RU/s of the local Cosmos container (6000; 0 = unlimited), TALLY_DEMO_DOMAIN.
set -euo pipefail
# shellcheck source=lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

KEEP_RUNNING=0
ATTACH=0
READ_PORT=${TALLY_READ_HTTP_PORT:-8080}
METRICS_PORT=${TALLY_SINK_METRICS_PORT:-9464}
READ_URL=http://127.0.0.1:$READ_PORT
METRICS_URL=http://127.0.0.1:$METRICS_PORT/metrics
SHOW_READ_URL=
LOADGEN_JAR=
TWO_SCHEMAS=0
for arg in "$@"; do
  case $arg in
    --keep-running) KEEP_RUNNING=1 ;;
    --two-schemas) TWO_SCHEMAS=1 ;;
    --attach) ATTACH=1 ;;
    --metrics-url=*) METRICS_URL=${arg#*=} ;;
    --read-url=*) READ_URL=${arg#*=} ;;
    --show-read-url=*) SHOW_READ_URL=${arg#*=} ;;
    --loadgen-jar=*) LOADGEN_JAR=${arg#*=} ;;
    -h|--help) script_help "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown option '$arg' (try ./tally demo --help)" ;;
  esac
done
# The curl commands printed are for the reader's shell: in Docker, the host's published port.
SHOW_READ_URL=${SHOW_READ_URL:-$READ_URL}

RATE=${TALLY_DEMO_RATE:-150}
# The shipped mapping reads Tally's TransactionEvent on `transactions`; --two-schemas adds a shop's OrderEvent on `orders`.
# SOURCE_TOPICS: every topic the watch counts as the aggregation's input (ingested, lag, drain).
INGEST_SOURCES=()
LOADGEN_SOURCES=()
SOURCE_TOPICS=transactions
if ((TWO_SCHEMAS)); then
  ((ATTACH == 0)) || die "--two-schemas starts ingest-app with its own sources file: run it on the local stack, not with --attach"
  INGEST_SOURCES=(--ingest.sources.file="$TALLY_ROOT/rules/two-schema-sources.yaml")
  LOADGEN_SOURCES=(--loadgen.orders.topic=orders --loadgen.orders.share=0.5)
  SOURCE_TOPICS=transactions,orders
fi
RUN_S=${TALLY_DEMO_SECONDS:-20}
BURST=${TALLY_DEMO_BURST:-4}
HOURS=${TALLY_DEMO_HOURS:-4}
CUSTOMERS=${TALLY_DEMO_CUSTOMERS:-1000}
RU_BUDGET=${TALLY_DEMO_RU_BUDGET:-6000}
DRAIN_TIMEOUT_S=${TALLY_DEMO_DRAIN_TIMEOUT_S:-180}
for v in RATE RUN_S BURST HOURS CUSTOMERS RU_BUDGET DRAIN_TIMEOUT_S; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, got '${!v}'"
done
((HOURS >= 1)) || die "TALLY_DEMO_HOURS must be at least 1"
# Each run is its own tenant, so its buckets hold exactly this run's events even when the stack still
# holds events of earlier runs.
DOMAIN=${TALLY_DEMO_DOMAIN:-demo-$(date -u +%Y%m%d-%H%M%S)}
# The customer the example queries look at: loadgen's customers are Zipf-distributed, c-0 is the busiest.
CUSTOMER=c-0
if ((ATTACH)); then
  [[ -n $LOADGEN_JAR ]] || die "--attach needs --loadgen-jar=PATH"
  [[ -w $STATE || -w $(dirname "$STATE") ]] || STATE=$(mktemp -d)
else
  # Built by ./tally build before it is used; the example queries run from it too.
  LOADGEN_JAR=$TALLY_ROOT/loadgen/target/loadgen.jar
fi
LOGS=$STATE/logs
TRUTH=$STATE/loadgen/demo-ground-truth.json
TALLY=$TALLY_ROOT/tally
APP_NAMES=()
APP_PIDS=()
LOADGEN_PID=
WATCH_PID=
START_S=$SECONDS

# Progress goes to stderr: rewritten in place on a terminal (DemoWatch keeps it narrower than WIDTH),
# one plain line per second otherwise (WIDTH 0).
LIVE=0
WIDTH=0
if [[ -t 2 ]]; then
  LIVE=1
  WIDTH=$(tput cols 2>/dev/null || echo 80)
fi
end_live_line() {
  ((LIVE)) && printf '\n' >&2
  LIVE_PENDING=0
}
LIVE_PENDING=0

# --- stopping -------------------------------------------------------------------------------------

# TERM, then KILL after $1 seconds, for every pid after it; waits until each has gone.
stop_pids() {
  local timeout=$1 pid deadline
  shift
  for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
  deadline=$((SECONDS + timeout))
  for pid in "$@"; do
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
      say "pid $pid still running after ${timeout}s, sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
  done
}

# The live line's writer goes first, so that nothing redraws it after the line has been ended.
stop_watch() {
  if [[ -n $WATCH_PID ]]; then
    stop_pids 5 "$WATCH_PID"
    WATCH_PID=
  fi
}

finish() {
  local rc=$?
  trap - EXIT INT TERM HUP
  stop_watch
  ((LIVE_PENDING)) && end_live_line
  if [[ -n $LOADGEN_PID ]] && kill -0 "$LOADGEN_PID" 2>/dev/null; then
    say "stopping loadgen ..."
    stop_pids 10 "$LOADGEN_PID"
  fi
  if ((KEEP_RUNNING && rc == 0 && !ATTACH)); then
    say ""
    say "left running (--keep-running):"
    local i
    for i in "${!APP_NAMES[@]}"; do say "  ${APP_NAMES[i]} pid ${APP_PIDS[i]}, log ${LOGS#"$TALLY_ROOT"/}/${APP_NAMES[i]}.log"; done
    say "  read-service $READ_URL, ingest-app metrics $METRICS_URL"
    say "stop everything with:"
    say "  kill ${APP_PIDS[*]} && ./tally stack down"
    exit 0
  fi
  if ((${#APP_PIDS[@]})); then
    say "stopping ${APP_NAMES[*]} ..."
    # ingest-app closes Kafka Streams within 30 s and lets the sink finish its batch within 10 s.
    stop_pids 45 "${APP_PIDS[@]}"
  fi
  ((ATTACH)) || "$TALLY_ROOT/local/stack.sh" down || true
  exit "$rc"
}
trap finish EXIT
trap 'stop_watch; ((LIVE_PENDING)) && end_live_line; say "interrupted"; exit 130' INT TERM
trap 'exit 129' HUP # the terminal went away: stop everything all the same

step() { say ""; say "==> $*"; }

# Starts a Tally app in the background, output to $LOGS/<name>.log. The apps ignore the terminal's
# Ctrl-C (background jobs of a script do); this script stops them, in order, with SIGTERM.
start_app() { # name, ./tally command and flags...
  local name=$1
  shift
  "$TALLY" "$@" >"$LOGS/$name.log" 2>&1 &
  APP_NAMES+=("$name")
  APP_PIDS+=($!)
}

# Fails when an app this script started has exited.
check_apps() {
  local i
  for i in "${!APP_PIDS[@]}"; do
    kill -0 "${APP_PIDS[i]}" 2>/dev/null && continue
    ((LIVE_PENDING)) && end_live_line
    say "last lines of $LOGS/${APP_NAMES[i]}.log:"
    tail -n 15 "$LOGS/${APP_NAMES[i]}.log" >&2 || true
    die "${APP_NAMES[i]} exited"
  done
}

# Waits until URL $2 answers, at most $3 seconds; $1 names it in messages.
await_url() {
  local what=$1 url=$2 timeout=$3 deadline=$((SECONDS + $3))
  until http_ok "$url"; do
    ((ATTACH)) || check_apps
    ((SECONDS < deadline)) || die "$what did not answer on $url within ${timeout}s"
    sleep 0.5
  done
}

# Runs as a background job: exec, so that the job's pid is loadgen's own and stopping it stops loadgen.
run_loadgen() {
  if ((ATTACH)); then
    # shellcheck disable=SC2086 # JAVA_OPTS is a list of JVM flags
    exec "$(java_bin)" ${JAVA_OPTS:-} -jar "$LOADGEN_JAR" "$@"
  else
    exec "$TALLY" loadgen "$@"
  fi
}

# --- the steps in Java ---------------------------------------------------------------------------------

# They live in the loadgen jar (package io.tally.loadgen.demo), beside the code that writes the ground
# truth, which they read by structure. A command, not a function: run as a background job, the job's
# pid is then the JVM's own, and stopping the job stops it.
DEMO_JAVA=("$(java_bin)" -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp "$LOADGEN_JAR")

# --- 1..3: stack and apps ---------------------------------------------------------------------------

mkdir -p "$LOGS" "$STATE/loadgen"
if ((ATTACH)); then
  step "1-2/5 waiting for ingest-app ($METRICS_URL) and read-service ($READ_URL)"
  await_url "read-service" "$READ_URL/health/live" 300
  await_url "ingest-app's metrics endpoint" "$METRICS_URL" 300
else
  step "1/5 local stack (Kafka, schema registry, local Cosmos)"
  # One build of every application first: the stack's topic step runs ingest-app's jar.
  "$TALLY" build
  "$TALLY_ROOT/local/stack.sh" up
  control=http://127.0.0.1:$TALLY_COSMOS_CONTROL_PORT
  if ((RU_BUDGET > 0)); then
    # A provisioned throughput below the burst's demand, so the sink shows how it meets 429s.
    curl -fsS -o /dev/null -X PUT "$control/throughput" -d "{\"ruPerSecond\":$RU_BUDGET}" \
      || die "could not set the local Cosmos throughput on $control/throughput"
    say "local Cosmos: every container limited to $RU_BUDGET RU/s (TALLY_DEMO_RU_BUDGET=0 lifts it)"
  else
    curl -fsS -o /dev/null -X PUT "$control/throughput" -d '{"ruPerSecond":0}' || true
  fi

  step "2/5 ingest-app (aggregation + Cosmos sink), log: ${LOGS#"$TALLY_ROOT"/}/ingest-app.log; read-service, log: ${LOGS#"$TALLY_ROOT"/}/read-service.log"
  start_app ingest-app ingest --ingest.role=both --ingest.state-dir="$STATE/streams" --sink.metrics.port="$METRICS_PORT" \
    ${INGEST_SOURCES[@]+"${INGEST_SOURCES[@]}"}
  start_app read-service serve --read.http.port="$READ_PORT"
  await_url "read-service" "$READ_URL/health/live" 120
  say "read-service answers on $READ_URL"
  await_url "ingest-app's metrics endpoint" "$METRICS_URL" 120
  say "ingest-app runs; metrics on $METRICS_URL"
fi

# --- 4: loadgen in the background -------------------------------------------------------------------

burst_start_ms=$((RUN_S * 2000 / 5))
burst_ms=$((RUN_S * 1000 / 5))
step "3/5 loadgen: ${RATE}/s for ${RUN_S}s, ${BURST}x burst from $((burst_start_ms / 1000))s for $((burst_ms / 1000))s, \
event times over the last ${HOURS}h, ${CUSTOMERS} customers, domain $DOMAIN"
((TWO_SCHEMAS == 0)) || say "  half of them as OrderEvents on the topic orders (nested, cents, ISO time), the rest as TransactionEvents"
rm -f "$TRUTH"
# The counters as they stand before this run's events (with --attach the apps may have run earlier
# demos): DemoWatch counts from this scrape; an empty file counts from 0.
BASELINE=$STATE/loadgen/demo-metrics-baseline.txt
curl -fsS --max-time 2 "$METRICS_URL" >"$BASELINE" 2>/dev/null || : >"$BASELINE"
run_loadgen --loadgen.domain="$DOMAIN" --loadgen.seed="$RANDOM" --loadgen.customers="$CUSTOMERS" \
  --loadgen.rate="$RATE" --loadgen.duration.ms=$((RUN_S * 1000)) --loadgen.burst.factor="$BURST" \
  --loadgen.burst.start.ms="$burst_start_ms" --loadgen.burst.duration.ms="$burst_ms" \
  --loadgen.window.ms=$((HOURS * 3600000)) --loadgen.rules-file="$TALLY_ROOT/rules/default-rules.yaml" \
  --loadgen.ground-truth-file="$TRUTH" --loadgen.progress.interval.ms=1000 ${LOADGEN_SOURCES[@]+"${LOADGEN_SOURCES[@]}"} \
  >"$LOGS/loadgen.out" 2>"$LOGS/loadgen.log" &
LOADGEN_PID=$!

# --- 5: live progress until the pipeline has drained ------------------------------------------------

step "4/5 running (one line per second; Ctrl-C stops everything)"
say "  produced = acknowledged by Kafka; ingested = read by the aggregation; updates = bucket updates read"
say "  by the sink; docs = documents written to Cosmos; lag = records the aggregation + the sink have yet to read"
# DemoWatch scrapes ingest-app's metrics each second and prints the live line until the pipeline has
# drained, then the summary (step 5/5). It runs in the background: bash runs a trap only once the
# foreground command has ended, and Ctrl-C or docker stop must stop everything at once.
"${DEMO_JAVA[@]}" io.tally.loadgen.demo.DemoWatch --metrics-url="$METRICS_URL" --baseline="$BASELINE" --loadgen-pid="$LOADGEN_PID" \
  --loadgen-log="$LOGS/loadgen.log" --truth="$TRUTH" --app-pids="${APP_PIDS[*]}" --width="$WIDTH" \
  --drain-timeout-s="$DRAIN_TIMEOUT_S" --elapsed-s=$((SECONDS - START_S)) --root="$TALLY_ROOT" --source-topics="$SOURCE_TOPICS" &
WATCH_PID=$!
LIVE_PENDING=1
rc=0
wait "$WATCH_PID" || rc=$?
WATCH_PID=
LIVE_PENDING=0
case $rc in
  0) ;;
  3)
    rc=0
    wait "$LOADGEN_PID" || rc=$?
    LOADGEN_PID=
    tail -n 15 "$LOGS/loadgen.log" >&2 || true
    die "loadgen failed (exit $rc); see $LOGS/loadgen.log"
    ;;
  4)
    check_apps
    die "an app exited"
    ;;
  *) die "the progress watch failed (exit $rc)" ;;
esac

# --- three example queries ------------------------------------------------------------------------------

# DemoQueries prints each query as a curl command with read-service's answer and the verdict against
# the ground truth; exit 1 = read-service differs.
rc=0
"${DEMO_JAVA[@]}" io.tally.loadgen.demo.DemoQueries --truth="$TRUTH" --read-url="$READ_URL" \
  --show-read-url="$SHOW_READ_URL" --customer="$CUSTOMER" || rc=$?
((rc != 1)) || die "read-service's answers differ from loadgen's ground truth (logs in $LOGS)"
((rc == 0)) || die "the example queries could not be asked (exit $rc; see above)"
