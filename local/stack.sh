#!/usr/bin/env bash
# Usage: ./tally stack up|down|status [component...] | clean [--all]     (the same as local/stack.sh ...)
#
# The Tally stack without Docker: a single-node KRaft Kafka broker (jars from Maven Central), AxonOps
# Schema Registry (built from the Go module proxy) keeping its schemas in a local PostgreSQL, and the local
# Cosmos endpoint (local/cosmos).
#
#   local/stack.sh up     [component...]   prepare what is missing, start, wait for health, create topics
#                                          (ingest-app's topics command; builds ingest-app's jar when stale)
#   local/stack.sh down   [component...]   SIGTERM, then SIGKILL after TALLY_STOP_TIMEOUT_S (default 30)
#   local/stack.sh status [component...]   one line per component; exit 0 only if all are up
#   local/stack.sh clean  [--all]          down, then delete data and logs; --all also deletes the
#                                          downloaded Kafka jars and the registry binary (whole state dir)
#
# Components: kafka, postgres, registry, cosmos (default: all). Everything binds to 127.0.0.1.
# Registry storage: TALLY_REGISTRY_STORAGE=postgresql (default: schemas and ids survive down/up; the postgres
#   component runs the server from Debian's packages, installed with apt-get when missing and run as root, or
#   any PostgreSQL 12+ whose initdb is on PATH) or memory (no postgres component; schemas are lost on down).
# State: ${TALLY_STATE_DIR:-<repo>/.tally}/{logs,run,kafka,postgres,registry,bin,cosmos}.
# Ports: TALLY_KAFKA_PORT=9092 TALLY_KAFKA_CONTROLLER_PORT=9093 TALLY_REGISTRY_PORT=8085
#        TALLY_COSMOS_PORT=8081 TALLY_COSMOS_CONTROL_PORT=8082 TALLY_POSTGRES_PORT=5433
# Tuning: TALLY_KAFKA_HEAP_OPTS (default -Xms256m -Xmx512m), TALLY_START_TIMEOUT_S (default 90).
set -euo pipefail
# shellcheck source=lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

REGISTRY_STORAGE=${TALLY_REGISTRY_STORAGE:-postgresql}
case $REGISTRY_STORAGE in
  postgresql) COMPONENTS=(kafka postgres registry cosmos) ;;
  memory) COMPONENTS=(kafka registry cosmos) ;;
  *) die "TALLY_REGISTRY_STORAGE must be postgresql or memory, not '$REGISTRY_STORAGE'" ;;
esac
: "${TALLY_POSTGRES_PORT:=5433}"
PG_DATA=$STATE/postgres/data
PG_RUN=$STATE/postgres/run
PG_USER=tally
PG_DATABASE=schema_registry
# Loopback only; the registry's connection string needs a non-empty one.
PG_PASSWORD=${TALLY_POSTGRES_PASSWORD:-tally-local}
START_TIMEOUT_S=${TALLY_START_TIMEOUT_S:-90}
STOP_TIMEOUT_S=${TALLY_STOP_TIMEOUT_S:-30}
REGISTRY_BIN=$STATE/bin/schema-registry
COSMOS_DIR=$TALLY_ROOT/local/cosmos
COSMOS_MAIN=$COSMOS_DIR/bin/tally-cosmos.js

usage() { # exit status: 0 for help (on stdout), else 2 (on stderr)
  if [[ ${1:-2} == 0 ]]; then script_help "${BASH_SOURCE[0]}"; else script_help "${BASH_SOURCE[0]}" >&2; fi
  exit "${1:-2}"
}

# --- per component: a marker in the process's command line (guards against a reused pid), its ports,
# --- and how to tell it is healthy.

cmdline_marker() {
  case $1 in
    kafka) printf '%s\n' "kafka.Kafka" ;;
    registry) printf '%s\n' "$REGISTRY_BIN" ;;
    postgres) printf '%s\n' "$PG_DATA" ;;
    cosmos) printf '%s\n' "tally-cosmos.js" ;;
  esac
}

ports_of() {
  case $1 in
    kafka) printf '%s\n' "$TALLY_KAFKA_PORT" "$TALLY_KAFKA_CONTROLLER_PORT" ;;
    registry) printf '%s\n' "$TALLY_REGISTRY_PORT" ;;
    postgres) printf '%s\n' "$TALLY_POSTGRES_PORT" ;;
    cosmos) printf '%s\n' "$TALLY_COSMOS_PORT" "$TALLY_COSMOS_CONTROL_PORT" ;;
  esac
}

endpoint_of() {
  case $1 in
    kafka) printf '%s\n' "127.0.0.1:$TALLY_KAFKA_PORT (controller 127.0.0.1:$TALLY_KAFKA_CONTROLLER_PORT)" ;;
    registry) printf '%s\n' "http://127.0.0.1:$TALLY_REGISTRY_PORT (storage: $REGISTRY_STORAGE)" ;;
    postgres) printf '%s\n' "postgresql://$PG_USER@127.0.0.1:$TALLY_POSTGRES_PORT/$PG_DATABASE (data $PG_DATA)" ;;
    cosmos) printf '%s\n' "https://127.0.0.1:$TALLY_COSMOS_PORT (control http://127.0.0.1:$TALLY_COSMOS_CONTROL_PORT, TLS files $STATE/cosmos/tls)" ;;
  esac
}

# Cheap check used by status and by up's wait loop. Kafka's real check (a metadata request) is the
# topic step that follows in `up`.
healthy() {
  case $1 in
    kafka) port_open "$TALLY_KAFKA_PORT" && port_open "$TALLY_KAFKA_CONTROLLER_PORT" ;;
    registry) http_ok "http://127.0.0.1:$TALLY_REGISTRY_PORT/health/ready" ;;
    postgres) "$(pg_bindir)/pg_isready" -q -h 127.0.0.1 -p "$TALLY_POSTGRES_PORT" ;;
    cosmos) http_ok "http://127.0.0.1:$TALLY_COSMOS_CONTROL_PORT/health" ;;
  esac
}

# pid of the component we started, if it is still that process.
component_pid() {
  local pid
  pid=$(live_pid "$1") || return 1
  ps -o command= -p "$pid" 2>/dev/null | grep -qF -- "$(cmdline_marker "$1")" || return 1
  printf '%s\n' "$pid"
}

# --- prepare: download/build what is missing. Each runs in the background during `up`, output to
# --- $STATE/logs/prepare-<component>.log.

kafka_needs_prepare() {
  [[ $(cat "$KAFKA_LIBS/.complete" 2>/dev/null) != "$(cksum <"$TALLY_ROOT/local/kafka/pom.xml")" ]]
}

kafka_prepare() {
  local mvn tmp=$STATE/kafka/libs.tmp
  mvn=$(maven_cmd)
  rm -rf "$tmp"
  "$mvn" -B -q -Dstyle.color=never -f "$TALLY_ROOT/local/kafka/pom.xml" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp"
  cksum <"$TALLY_ROOT/local/kafka/pom.xml" >"$tmp/.complete"
  rm -rf "$KAFKA_LIBS"
  mv "$tmp" "$KAFKA_LIBS"
}

registry_needs_prepare() {
  local d=$TALLY_ROOT/local/schema-registry
  ! [[ -x $REGISTRY_BIN && $REGISTRY_BIN -nt $d/go.sum && $REGISTRY_BIN -nt $d/go.mod && $REGISTRY_BIN -nt $d/build.sh ]]
}

registry_prepare() {
  "$TALLY_ROOT/local/schema-registry/build.sh" "$REGISTRY_BIN" >/dev/null
}

# PostgreSQL's server programs: Debian's newest /usr/lib/postgresql/*/bin, else wherever initdb is on PATH.
pg_bindir() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [[ -z $d ]] && command -v initdb >/dev/null 2>&1 && d=$(dirname "$(command -v initdb)")
  printf '%s\n' "$d"
}

# The server refuses to run as root: as root it runs as the OS user 'postgres' (created by Debian's package).
pg_as() {
  if ((EUID == 0)); then setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; else "$@"; fi
}

postgres_needs_prepare() {
  [[ -z $(pg_bindir) || ! -f $PG_DATA/PG_VERSION ]]
}

postgres_prepare() {
  if [[ -z $(pg_bindir) ]]; then
    ((EUID == 0)) && command -v apt-get >/dev/null 2>&1 ||
      die "postgres: no PostgreSQL server found. Install one (Debian/Ubuntu: sudo apt-get install postgresql; macOS: brew install postgresql), or run the registry in memory: TALLY_REGISTRY_STORAGE=memory"
    say "postgres: installing Debian's postgresql package"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql ||
      { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql; }
  fi
  ((EUID != 0)) || id postgres >/dev/null 2>&1 || die "postgres: running as root needs an OS user 'postgres' to run the server as"
  rm -rf "$PG_DATA"
  mkdir -p "$PG_DATA" "$PG_RUN"
  local pw=$STATE/postgres/.pw
  printf '%s\n' "$PG_PASSWORD" >"$pw"
  ((EUID != 0)) || chown -R postgres: "$STATE/postgres"
  # Local socket trusted, TCP (what the registry uses) by password.
  pg_as "$(pg_bindir)/initdb" -D "$PG_DATA" -U "$PG_USER" --pwfile="$pw" --auth-local=trust --auth-host=scram-sha-256 \
    -E UTF8 --locale=C >/dev/null
  rm -f "$pw"
}

# The registry's database, created on first use (the registry creates its tables itself).
postgres_ensure_database() {
  local bin
  bin=$(pg_bindir)
  [[ $(PGPASSWORD=$PG_PASSWORD "$bin/psql" -h 127.0.0.1 -p "$TALLY_POSTGRES_PORT" -U "$PG_USER" -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname = '$PG_DATABASE'") == 1 ]] ||
    PGPASSWORD=$PG_PASSWORD "$bin/createdb" -h 127.0.0.1 -p "$TALLY_POSTGRES_PORT" -U "$PG_USER" "$PG_DATABASE"
}

cosmos_needs_prepare() {
  # npm ci writes node_modules/.package-lock.json; redo it when package-lock.json changed since.
  ! [[ -f $COSMOS_DIR/node_modules/.package-lock.json && $COSMOS_DIR/node_modules/.package-lock.json -nt $COSMOS_DIR/package-lock.json ]]
}

cosmos_prepare() {
  (cd "$COSMOS_DIR" && npm ci --no-audit --no-fund --loglevel=error)
}

# --- start

kafka_start() {
  local conf=$STATE/kafka/server.properties data=$STATE/kafka/data cluster_id t
  t=$(<"$TALLY_ROOT/local/kafka/server.properties.template")
  t=${t//@KAFKA_PORT@/$TALLY_KAFKA_PORT}
  t=${t//@CONTROLLER_PORT@/$TALLY_KAFKA_CONTROLLER_PORT}
  t=${t//@DATA_DIR@/$data}
  printf '%s\n' "$t" >"$conf"
  if [[ ! -f $data/meta.properties ]]; then
    # 16 random bytes, base64url without padding, like `kafka-storage random-uuid`; a leading '-' would be
    # read as an option by the format command.
    cluster_id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
    cluster_id=${cluster_id/#-/A}
    say "kafka: formatting $data (cluster id $cluster_id)"
    # transaction.version=1: with Kafka 4.3.1's default (2), exactly-once Streams producers keep failing with
    # OutOfOrderSequenceException on internal topics and restart their tasks (docs/aggregation.md, Kafka version).
    kafka_tool storage format -t "$cluster_id" -c "$conf" --feature transaction.version=1 >"$STATE/logs/kafka-format.log" 2>&1 ||
      { tail -n 20 "$STATE/logs/kafka-format.log" >&2; die "kafka: storage format failed (log: $STATE/logs/kafka-format.log)"; }
  fi
  # shellcheck disable=SC2086 # TALLY_KAFKA_HEAP_OPTS is a list of JVM flags
  start_detached kafka "$(java_bin)" ${TALLY_KAFKA_HEAP_OPTS:--Xms256m -Xmx512m} -XX:+UseG1GC \
    -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$TALLY_ROOT/local/kafka/log4j2.properties" \
    -cp "$KAFKA_LIBS/*" kafka.Kafka "$conf"
}

postgres_start() {
  local -a run=("$(pg_bindir)/postgres" -D "$PG_DATA" -p "$TALLY_POSTGRES_PORT" -k "$PG_RUN" -c listen_addresses=127.0.0.1)
  ((EUID == 0)) && run=(setpriv --reuid=postgres --regid=postgres --init-groups -- "${run[@]}") # exec, same pid
  start_detached postgres "${run[@]}"
}

registry_start() {
  # Configuration: local/schema-registry/config.yaml (memory storage, BACKWARD); host, port and (by default)
  # PostgreSQL storage through the registry's own environment overrides.
  local -a storage=()
  if [[ $REGISTRY_STORAGE == postgresql ]]; then
    PID_TO_WATCH=$(cat "$STATE/run/postgres.pid" 2>/dev/null || true) wait_until "$START_TIMEOUT_S" healthy postgres ||
      die "registry: PostgreSQL is not up on 127.0.0.1:$TALLY_POSTGRES_PORT (log: $STATE/logs/postgres.log)"
    postgres_ensure_database
    storage=(SCHEMA_REGISTRY_STORAGE_TYPE=postgresql SCHEMA_REGISTRY_PG_HOST=127.0.0.1
      SCHEMA_REGISTRY_PG_PORT="$TALLY_POSTGRES_PORT" SCHEMA_REGISTRY_PG_DATABASE="$PG_DATABASE"
      SCHEMA_REGISTRY_PG_USER="$PG_USER" SCHEMA_REGISTRY_PG_PASSWORD="$PG_PASSWORD" SCHEMA_REGISTRY_PG_SSLMODE=disable)
  fi
  start_detached registry env SCHEMA_REGISTRY_HOST=127.0.0.1 SCHEMA_REGISTRY_PORT="$TALLY_REGISTRY_PORT" "${storage[@]}" \
    "$REGISTRY_BIN" -config "$TALLY_ROOT/local/schema-registry/config.yaml"
}

cosmos_start() {
  mkdir -p "$STATE/cosmos/tls"
  start_detached cosmos node "$COSMOS_MAIN" --host 127.0.0.1 --port "$TALLY_COSMOS_PORT" \
    --control-port "$TALLY_COSMOS_CONTROL_PORT" --tls-dir "$STATE/cosmos/tls"
}

# --- topics: ingest-app's `topics` command creates what is missing from io.tally.schemas.Topics (the specs ingest-app
# --- itself checks at start), reports what exists, and returns once every partition has a leader (KAFKA-15591: a
# --- batch produced right after createTopics can be lost). Existing topics are never altered.

ensure_topics() {
  local jar=$TALLY_ROOT/ingest-app/target/ingest-app.jar
  ensure_built ingest-app
  # A small client JVM (JIT tier 1, serial GC) starts in about a second on two cores. Its report goes to stderr with
  # the rest of `up`'s progress; stdout stays the endpoint summary.
  "$(java_bin)" -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar "$jar" topics \
    --kafka.bootstrap.servers="127.0.0.1:$TALLY_KAFKA_PORT" --topics.timeout.ms="$((START_TIMEOUT_S * 1000))" >&2 ||
    die "kafka: the topics are not ready (messages above); last lines of $STATE/logs/kafka.log:
$(tail -n 30 "$STATE/logs/kafka.log" 2>/dev/null)"
}

# --- commands

select_components() {
  local c
  SELECTED=()
  if (($# == 0)); then
    SELECTED=("${COMPONENTS[@]}")
    return
  fi
  for c in "$@"; do
    [[ " ${COMPONENTS[*]} " == *" $c "* ]] || die "unknown component '$c' (expected: ${COMPONENTS[*]})"
    SELECTED+=("$c")
  done
}

cmd_up() {
  select_components "$@"
  # The registry keeps its schemas in PostgreSQL: starting the registry starts that first.
  if [[ $REGISTRY_STORAGE == postgresql && " ${SELECTED[*]} " == *" registry "* && " ${SELECTED[*]} " != *" postgres "* ]]; then
    SELECTED=(postgres "${SELECTED[@]}")
  fi
  command -v curl >/dev/null 2>&1 || die "curl is required for health checks (apt-get install curl)."
  mkdir -p "$STATE"/{logs,run,kafka,postgres,registry,bin,cosmos}
  local c pid port to_prepare=() pids=() failed=()

  # Prerequisites first, with exact messages, before anything slow starts.
  for c in "${SELECTED[@]}"; do
    case $c in
      kafka) require_java ;;
      registry) registry_needs_prepare && require_go ;;
      cosmos)
        [[ -f $COSMOS_MAIN ]] || die "cosmos: $COSMOS_MAIN does not exist (local/cosmos is not built yet). Start the other components with 'local/stack.sh up kafka registry'."
        require_node
        ;;
    esac
  done

  # Which ones run already (ours: pid file + matching command line), and are their ports free otherwise?
  local -a to_start=()
  for c in "${SELECTED[@]}"; do
    if pid=$(component_pid "$c"); then
      say "$c: already running (pid $pid)"
      continue
    fi
    rm -f "$STATE/run/$c.pid"
    for port in $(ports_of "$c"); do
      port_open "$port" && die "$c: port $port on 127.0.0.1 is taken by a process this script did not start. Stop it, or choose other ports (TALLY_*_PORT, see 'local/stack.sh help')."
    done
    to_start+=("$c")
    "${c}_needs_prepare" && to_prepare+=("$c")
  done

  # Downloads and builds run side by side (Maven is network-bound, go build CPU-bound).
  if ((${#to_prepare[@]})); then
    say "preparing ${to_prepare[*]} (first run: a few minutes; logs in $STATE/logs/prepare-*.log)"
    for c in "${to_prepare[@]}"; do
      ("${c}_prepare") >"$STATE/logs/prepare-$c.log" 2>&1 &
      pids+=($!)
    done
    local i
    for i in "${!to_prepare[@]}"; do
      wait "${pids[i]}" || failed+=("${to_prepare[i]}")
    done
    for c in "${failed[@]}"; do
      say "$c: preparation failed; last lines of $STATE/logs/prepare-$c.log:"
      tail -n 25 "$STATE/logs/prepare-$c.log" >&2
    done
    ((${#failed[@]} == 0)) || exit 1
  fi

  for c in "${to_start[@]}"; do
    say "$c: starting"
    "${c}_start"
  done

  for c in "${SELECTED[@]}"; do
    # The pid as written at start, alive or not, so a process that dies at once fails fast.
    pid=$(cat "$STATE/run/$c.pid" 2>/dev/null) || pid=
    local rc=0
    PID_TO_WATCH=$pid wait_until "$START_TIMEOUT_S" healthy "$c" || rc=$?
    if ((rc != 0)); then
      if ((rc == 2)); then
        say "$c: process exited during start-up; last lines of $STATE/logs/$c.log:"
      else
        say "$c: not healthy after ${START_TIMEOUT_S}s; last lines of $STATE/logs/$c.log:"
      fi
      tail -n 30 "$STATE/logs/$c.log" >&2 || true
      say "stop what did start with 'local/stack.sh down'"
      exit 1
    fi
  done

  [[ " ${SELECTED[*]} " == *" kafka "* ]] && ensure_topics

  say "stack up (${SELECTED[*]}), state in $STATE"
  for c in "${SELECTED[@]}"; do
    printf '%-9s %s\n' "$c" "$(endpoint_of "$c")"
  done
}

# Kill process group $2 (the component was started as a session leader, so its children go too).
signal_group() {
  kill "-$1" -- "-$2" 2>/dev/null || kill "-$1" "$2" 2>/dev/null || true
}

group_alive() {
  kill -0 -- "-$1" 2>/dev/null || kill -0 "$1" 2>/dev/null
}

cmd_down() {
  select_components "$@"
  local c pid names=() pids=()
  for c in "${SELECTED[@]}"; do
    if pid=$(component_pid "$c"); then
      say "$c: stopping (pid $pid)"
      signal_group TERM "$pid"
      names+=("$c")
      pids+=("$pid")
    else
      rm -f "$STATE/run/$c.pid"
    fi
  done
  local deadline=$((SECONDS + STOP_TIMEOUT_S)) i alive
  while :; do
    alive=0
    for i in "${!pids[@]}"; do group_alive "${pids[i]}" && alive=1; done
    ((alive == 0 || SECONDS >= deadline)) && break
    sleep 0.2
  done
  for i in "${!pids[@]}"; do
    if group_alive "${pids[i]}"; then
      say "${names[i]}: still running after ${STOP_TIMEOUT_S}s, sending SIGKILL"
      signal_group KILL "${pids[i]}"
      while group_alive "${pids[i]}"; do sleep 0.1; done
    fi
    rm -f "$STATE/run/${names[i]}.pid"
  done
  if ((${#names[@]})); then say "stopped: ${names[*]}"; else say "nothing was running"; fi
}

cmd_status() {
  select_components "$@"
  local c pid state note all=0 port
  for c in "${SELECTED[@]}"; do
    note=
    if pid=$(component_pid "$c"); then
      if healthy "$c"; then state="running (pid $pid)"; else state="unhealthy (pid $pid)"; all=1; fi
    else
      state=stopped
      all=1
      for port in $(ports_of "$c"); do
        port_open "$port" && note=" [port $port is taken by a process this script did not start]"
      done
    fi
    printf '%-9s %-22s %s%s\n' "$c" "$state" "$(endpoint_of "$c")" "$note"
  done
  return "$all"
}

cmd_clean() {
  local all=0
  case ${1:-} in
    --all) all=1 ;;
    "") ;;
    *) die "usage: local/stack.sh clean [--all]" ;;
  esac
  cmd_down
  case $STATE in
    "" | / | "$HOME" | "$TALLY_ROOT") die "refusing to delete state dir '$STATE'" ;;
  esac
  if ((all)); then
    rm -rf "$STATE"
    say "removed $STATE (jars and registry binary will be fetched/built again on next up)"
  else
    # Kept: $STATE/kafka/libs, $STATE/bin (slow to get again) and $STATE/cosmos/tls (trust stores made
    # from that certificate keep working).
    rm -rf "$STATE/kafka/data" "$STATE/kafka/server.properties" "$STATE/postgres" "$STATE/registry" "$STATE/logs" "$STATE/run"
    find "$STATE/cosmos" -mindepth 1 -maxdepth 1 ! -name tls -exec rm -rf {} + 2>/dev/null || true
    say "removed data and logs in $STATE (kept Kafka jars, registry binary, Cosmos TLS files; 'clean --all' removes those too)"
  fi
}

wants_help "$@" && usage 0
case ${1:-} in
  up) shift; cmd_up "$@" ;;
  down) shift; cmd_down "$@" ;;
  status) shift; cmd_status "$@" ;;
  clean) shift; cmd_clean "$@" ;;
  -h | --help | help) usage 0 ;;
  "") usage ;;
  *) say "unknown command '$1'"; usage ;;
esac
