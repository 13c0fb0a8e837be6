#!/usr/bin/env bash
# Usage: ./tally demo [--keep-running] | --attach --metrics-url=URL --read-url=URL --loadgen-jar=PATH
#
# ./tally demo: the whole path, live. Brings the local stack up, starts ingest-app (both roles) and
# read-service, and runs loadgen in the background: a few thousand events over the last hours, with a
# burst. One progress line per second shows events produced and ingested, bucket updates, documents
# written, consumer lag, request units per second and 429s. Once the pipeline has drained it prints a
# summary and three example queries (curl commands with read-service's answers, checked against
# loadgen's ground truth). Stops everything at the end or on Ctrl-C (exit 130) unless --keep-running.
#
#   --keep-running       leave the stack, ingest-app and read-service up (prints how to stop them)
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
for arg in "$@"; do
  case $arg in
    --keep-running) KEEP_RUNNING=1 ;;
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
START_S=$SECONDS

# Progress goes to stderr: rewritten in place on a terminal, one plain line per second otherwise.
LIVE=0
WIDTH=0
if [[ -t 2 ]]; then
  LIVE=1
  # A line wider than the terminal wraps, and \r then redraws only its last row.
  WIDTH=$(tput cols 2>/dev/null || echo 80)
fi
live_line() {
  if ((LIVE)); then printf '\r\033[K%s' "$1" >&2; else printf '%s\n' "$1" >&2; fi
}
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

finish() {
  local rc=$?
  trap - EXIT INT TERM HUP
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
trap '((LIVE_PENDING)) && end_live_line; say "interrupted"; exit 130' INT TERM
trap 'exit 129' HUP # the terminal went away: stop everything all the same

step() { say ""; say "==> $*"; }
# Results (summary, queries and answers) go to stdout.
out() { printf '%s\n' "$*"; }

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

# --- reading the pipeline's state -------------------------------------------------------------------

# One scrape of ingest-app's Prometheus endpoint into M[name] (sums over labels, whole numbers): Kafka
# Streams' consumer and producer metrics and the sink's own. Aggregation lag covers its input topic and
# its repartition topic. Sink lag is what the aggregation emitted and the sink has not read yet: the
# sink's records-lag-max gauge is a windowed maximum that stays up for a minute after the sink has
# caught up. Counters count from BASE, taken before loadgen starts: with --attach the apps may have run
# earlier demos.
declare -A M=()
declare -A BASE=()
read_metrics() {
  local out name value
  out=$(curl -fsS --max-time 2 "$METRICS_URL" 2>/dev/null | awk -v produced="$PRODUCED" -v base_ingested="${BASE[ingested]:-0}" '
    /^#/ { next }
    {
      name = $1; sub(/\{.*/, "", name); v = $NF
      if (v == "NaN" || v ~ /Inf/) next
      if (name == "kafka_consumer_fetch_manager_records_consumed_total" && $0 ~ /topic="transactions"/) ingested += v
      else if (name == "kafka_consumer_fetch_manager_records_lag" && $0 ~ /topic="transactions"/) input_lag += v
      else if (name == "kafka_consumer_fetch_manager_records_lag") agg_lag += v
      else if (name == "kafka_producer_topic_record_send_total" && $0 ~ /topic="bucket-updates"/) emitted += v
      else if (name == "kafka_producer_topic_record_send_total" && $0 ~ /topic="transactions.dlq"/) dlq += v
      else if (name == "tally_sink_updates_consumed_total") updates += v
      else if (name == "tally_sink_documents_written_total" && $0 ~ /outcome="written"/) docs += v
      else if (name == "tally_sink_documents_written_total" && $0 ~ /outcome="stale"/) stale += v
      else if (name == "tally_sink_documents_written_total" && $0 ~ /outcome="dead_lettered"/) docs_dlq += v
      else if (name == "tally_sink_request_units_total") ru += v
      else if (name == "tally_sink_throttled_total") throttled += v
      else if (name == "tally_sink_in_flight_documents") in_flight += v
      seen = 1
    }
    END {
      if (!seen) exit 1
      sink_lag = emitted > updates ? emitted - updates : 0
      # The input lag: records-lag is measured at each fetch, and Kafka Streams stops fetching a
      # partition while it has a backlog buffered, so count what loadgen produced and was not read too.
      unread = produced - (ingested - base_ingested)
      agg_lag += input_lag > unread ? input_lag : unread
      printf "ingested %.0f\nagg_lag %.0f\nemitted %.0f\ndlq %.0f\nupdates %.0f\ndocs %.0f\nstale %.0f\n", ingested, agg_lag, emitted, dlq, updates, docs, stale
      printf "docs_dlq %.0f\nru %.0f\nthrottled %.0f\nsink_lag %.0f\nin_flight %.0f\n", docs_dlq, ru, throttled, sink_lag, in_flight
    }') || return 1
  while read -r name value; do M[$name]=$((value - ${BASE[$name]:-0})); done <<<"$out"
}

# Counters as they stand before this run's events (gauges and lags are not counters).
take_base() {
  local k
  read_metrics || return 0
  for k in ingested emitted dlq updates docs stale docs_dlq ru throttled; do BASE[$k]=${M[$k]}; done
}

# loadgen's own count of records Kafka acknowledged, and how many it plans, from its progress log.
PRODUCED=0
PLANNED=0
read_produced() {
  local line
  line=$(tail -n 4 "$LOGS/loadgen.log" 2>/dev/null) || return 0
  [[ $line =~ .*acked\ ([0-9,]+)/([0-9,]+) ]] || return 0
  PRODUCED=${BASH_REMATCH[1]//,/}
  PLANNED=${BASH_REMATCH[2]//,/}
}

# The live line, from PRODUCED, PLANNED, M and $1 = RU/s, in one process (this runs every second, on
# machines that may be busy). On a terminal narrower than the line, shorter labels, then cut.
progress_line() {
  awk -v t=$((SECONDS - LOADGEN_T0)) -v p="$PRODUCED" -v pl="$PLANNED" -v i="${M[ingested]}" -v u="${M[updates]}" \
    -v d="${M[docs]}" -v al="${M[agg_lag]}" -v sl="${M[sink_lag]}" -v rus="$1" -v th="${M[throttled]}" -v w="$WIDTH" '
    function g(n,   s, o) { s = sprintf("%.0f", n); o = ""; while (length(s) > 3) { o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) } return s o }
    BEGIN {
      line = sprintf("%4ds  produced %s/%s  ingested %s  updates %s  docs %s  lag %s+%s  %s RU/s  429s %s", t, g(p), g(pl), g(i), g(u), g(d), g(al), g(sl), g(rus), g(th))
      if (w > 0 && length(line) >= w)
        line = sprintf("%ds prod %s/%s in %s upd %s docs %s lag %s+%s %s RU/s 429s %s", t, g(p), g(pl), g(i), g(u), g(d), g(al), g(sl), g(rus), g(th))
      if (w > 0 && length(line) >= w) line = substr(line, 1, w - 1)
      print line
    }'
}

now_ms() {
  local t=${EPOCHREALTIME:-}
  if [[ -n $t ]]; then
    t=${t//[.,]/}
    printf '%s\n' "$((10#${t:0:${#t}-3}))"
  else
    printf '%s\n' "$((SECONDS * 1000))"
  fi
}

# 1234567 -> 1,234,567
group() {
  awk -v n="$1" 'BEGIN { s = sprintf("%.0f", n); o = ""; while (length(s) > 3) { o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) } print s o }'
}

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
  start_app ingest-app ingest --ingest.role=both --ingest.state-dir="$STATE/streams" --sink.metrics.port="$METRICS_PORT"
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
rm -f "$TRUTH"
take_base
run_loadgen --loadgen.domain="$DOMAIN" --loadgen.seed="$RANDOM" --loadgen.customers="$CUSTOMERS" \
  --loadgen.rate="$RATE" --loadgen.duration.ms=$((RUN_S * 1000)) --loadgen.burst.factor="$BURST" \
  --loadgen.burst.start.ms="$burst_start_ms" --loadgen.burst.duration.ms="$burst_ms" \
  --loadgen.window.ms=$((HOURS * 3600000)) --loadgen.rules-file="$TALLY_ROOT/rules/default-rules.yaml" \
  --loadgen.ground-truth-file="$TRUTH" --loadgen.progress.interval.ms=1000 \
  >"$LOGS/loadgen.out" 2>"$LOGS/loadgen.log" &
LOADGEN_PID=$!
LOADGEN_T0=$SECONDS

# --- 5: live progress until the pipeline has drained ------------------------------------------------

step "4/5 running (one line per second; Ctrl-C stops everything)"
say "  produced = acknowledged by Kafka; ingested = read by the aggregation; updates = bucket updates read"
say "  by the sink; docs = documents written to Cosmos; lag = records the aggregation + the sink have yet to read"
last_ms=$(now_ms)
last_ru=0
peak_rus=0
loadgen_s=
drained_s=
quiet=0
signature=
while :; do
  sleep 1
  ((ATTACH)) || check_apps
  [[ -n $loadgen_s ]] || read_produced
  if [[ -z $loadgen_s && -n $LOADGEN_PID ]] && ! kill -0 "$LOADGEN_PID" 2>/dev/null; then
    rc=0
    wait "$LOADGEN_PID" || rc=$?
    LOADGEN_PID=
    loadgen_s=$((SECONDS - LOADGEN_T0))
    if ((rc != 0)); then
      end_live_line
      tail -n 15 "$LOGS/loadgen.log" >&2 || true
      die "loadgen failed (exit $rc); see $LOGS/loadgen.log"
    fi
    acked=$(sed -n 's/^loadgen: \([0-9,]*\) records acknowledged.*/\1/p' "$LOGS/loadgen.out" | tr -d ,)
    PRODUCED=${acked:-$PRODUCED}
    PLANNED=$PRODUCED
  fi
  read_metrics || continue
  now=$(now_ms)
  rus=$(((M[ru] - last_ru) * 1000 / (now - last_ms > 0 ? now - last_ms : 1)))
  last_ms=$now
  last_ru=${M[ru]}
  ((rus > peak_rus)) && peak_rus=$rus
  line=$(progress_line "$rus")
  LIVE_PENDING=1
  live_line "$line"
  [[ -n $loadgen_s ]] || continue
  # Drained: everything produced was read, nothing in flight, and the counters of the aggregation and
  # the sink did not move for three seconds (bucket updates leave the aggregation at its commit
  # interval, 1 s; the sink writes within its flush window, 0.2 s). The sink's lag must be 0 too, except
  # after ten quiet seconds: updates of an aborted transaction count as emitted but are never read.
  now_sig="${M[ingested]} ${M[emitted]} ${M[updates]} ${M[docs]} ${M[stale]} ${M[docs_dlq]}"
  if ((M[ingested] >= PRODUCED && M[agg_lag] == 0 && M[in_flight] == 0)) && [[ $now_sig == "$signature" ]]; then
    quiet=$((quiet + 1))
  else
    quiet=0
  fi
  signature=$now_sig
  if (((quiet >= 3 && M[sink_lag] == 0) || quiet >= 10)); then
    drained_s=$((SECONDS - LOADGEN_T0 - loadgen_s))
    break
  fi
  if ((SECONDS - LOADGEN_T0 - loadgen_s > DRAIN_TIMEOUT_S)); then
    end_live_line
    say "warning: the pipeline did not drain within ${DRAIN_TIMEOUT_S}s after loadgen ended; the summary shows where it stands"
    break
  fi
done
end_live_line

# --- summary -----------------------------------------------------------------------------------------

out=$(<"$LOGS/loadgen.out")
kinds=$(sed -n 's/^  by kind: //p' <<<"$out")
expected=$(sed -n 's/^  expected: //p' <<<"$out")
accepted=$(sed -n 's/^\([0-9,]*\) events counted.*/\1/p' <<<"$expected")
duplicates=$(sed -n 's/.* \([0-9,]*\) duplicates.*/\1/p' <<<"$expected")
documents=$(sed -n 's/.* \([0-9,]*\) bucket documents.*/\1/p' <<<"$expected")
dlq=$(sed -n 's/.*DLQ \(.*\)$/\1/p' <<<"$expected")
ru_total=${M[ru]}

out ""
out "==> 5/5 summary"
{
  if [[ -n $drained_s ]]; then drained="the pipeline drained ${drained_s} s after it"; else drained="the pipeline had not drained"; fi
  printf '  elapsed          %s s: loadgen ran %s s, %s\n' $((SECONDS - START_S)) "${loadgen_s:-?}" "$drained"
  printf '  produced         %s events: %s\n' "$(group "$PRODUCED")" "$kinds"
  printf '  ingested         %s read by the aggregation\n' "$(group "${M[ingested]}")"
  printf '  accepted         %s counted once, %s duplicates dropped (ground truth)\n' "$accepted" "$duplicates"
  printf '  DLQ              %s written to transactions.dlq; ground truth %s\n' "$(group "${M[dlq]}")" "$dlq"
  printf '  bucket updates   %s emitted by the aggregation, %s read by the sink\n' "$(group "${M[emitted]}")" "$(group "${M[updates]}")"
  printf '  buckets written  %s document writes for %s buckets (ground truth); %s stale, %s dead-lettered\n' \
    "$(group "${M[docs]}")" "$documents" "$(group "${M[stale]}")" "$(group "${M[docs_dlq]}")"
  printf '  request units    %s RU, peak %s RU/s; %s operations answered 429 and were retried\n' "$(group "$ru_total")" \
    "$(group "$peak_rus")" "$(group "${M[throttled]}")"
  printf '  ground truth     %s\n' "${TRUTH/#$TALLY_ROOT\//}"
}

# --- three example queries ------------------------------------------------------------------------------

# DemoQueries lives in the loadgen jar, beside the code that writes the ground truth, and reads that
# file by structure. It prints each query as a curl command with read-service's answer and the
# verdict against the ground truth; exit 1 = read-service differs.
rc=0
"$(java_bin)" -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp "$LOADGEN_JAR" io.tally.loadgen.demo.DemoQueries \
  --truth="$TRUTH" --read-url="$READ_URL" --show-read-url="$SHOW_READ_URL" --customer="$CUSTOMER" || rc=$?
((rc != 1)) || die "read-service's answers differ from loadgen's ground truth (logs in $LOGS)"
((rc == 0)) || die "the example queries could not be asked (exit $rc; see above)"
