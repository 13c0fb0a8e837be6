# shellcheck shell=bash
# Shared by local/stack.sh, local/kafka/kafka.sh and local/schema-registry/build.sh. Source it; do not run it.
#
# Sets: TALLY_ROOT, STATE (= ${TALLY_STATE_DIR:-$TALLY_ROOT/.tally}), the TALLY_*_PORT defaults, KAFKA_LIBS,
# and small helpers for messages, version checks, pid files, ports and waiting.

TALLY_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
STATE=${TALLY_STATE_DIR:-$TALLY_ROOT/.tally}

: "${TALLY_KAFKA_PORT:=9092}"
: "${TALLY_KAFKA_CONTROLLER_PORT:=9093}"
: "${TALLY_REGISTRY_PORT:=8085}"
: "${TALLY_COSMOS_PORT:=8081}"
: "${TALLY_COSMOS_CONTROL_PORT:=8082}"

KAFKA_LIBS=$STATE/kafka/libs

# Progress and errors go to stderr; stdout is kept for results (status table, endpoint summary).
say() { printf '%s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# A script's help is its leading comment block (after the #! line), printed without the "# ".
script_help() {
  awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$1"
}

# True when any argument asks for help; scripts answer it before they act on the others.
wants_help() {
  local a
  for a in "$@"; do
    [[ $a == --help || $a == -h ]] && return 0
  done
  return 1
}

# version_ge 17.0.2 17 -> true. Compares dot-separated numeric parts.
version_ge() {
  local IFS=.
  # shellcheck disable=SC2206 # intended word splitting on '.'
  local -a have=($1) want=($2)
  local i
  for ((i = 0; i < ${#want[@]}; i++)); do
    local h=${have[i]:-0} w=${want[i]:-0}
    h=${h%%[!0-9]*} w=${w%%[!0-9]*}
    ((10#${h:-0} > 10#${w:-0})) && return 0
    ((10#${h:-0} < 10#${w:-0})) && return 1
  done
  return 0
}

java_bin() {
  if [[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/java ]]; then
    printf '%s\n' "$JAVA_HOME/bin/java"
  else
    command -v java || true
  fi
}

require_java() {
  local java v
  java=$(java_bin)
  [[ -n $java ]] || die "Java >= 17 is required to run Kafka but no 'java' was found. Install a JDK 17+ (Debian/Ubuntu: apt-get install openjdk-17-jdk-headless) or set JAVA_HOME."
  v=$("$java" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1)
  v=${v#1.} # 1.8.0 -> 8.0
  version_ge "${v:-0}" 17 || die "Java >= 17 is required to run Kafka 4.x; found '${v:-unknown}' at $java. Install a JDK 17+ or point JAVA_HOME at one."
}

require_go() {
  command -v go >/dev/null 2>&1 || die "Go >= 1.22 is required to build the schema registry and the deploy/ checkers (once) but 'go' is not on PATH. Install it from https://go.dev/dl/ (Debian's golang-go is too old)."
  local v
  v=$(go env GOVERSION 2>/dev/null)
  v=${v#go}
  version_ge "${v:-0}" 1.22 || die "Go >= 1.22 is required to build the schema registry; found '${v:-unknown}'. Install a newer Go from https://go.dev/dl/."
}

# go_build_pinned MODULE_DIR PACKAGE OUT DESCRIPTION [go build flags...]
# Compiles PACKAGE at the version pinned by the tools module in MODULE_DIR (go.mod, go.sum) to OUT, unless OUT is
# newer than go.mod, go.sum and the calling script. Test JVMs and scripts may ask at once: one builds, the others
# wait on a lock beside OUT and then find it built. CGO off: a static binary, no C compiler needed.
go_build_pinned() {
  local module=$1 package=$2 out=$3 description=$4
  shift 4
  local caller=${BASH_SOURCE[1]}
  mkdir -p "$(dirname "$out")"
  _pinned_up_to_date() { [[ -x $out && $out -nt $module/go.sum && $out -nt $module/go.mod && $out -nt $caller ]]; }
  if ! _pinned_up_to_date && command -v flock >/dev/null 2>&1; then
    exec 9>"$(dirname "$out")/.$(basename "$out").lock"
    flock 9
  fi
  if ! _pinned_up_to_date; then
    require_go
    say "building $description -> $out"
    local tmp=$out.tmp.$$
    # If the local Go is older than the go line in go.mod, GOTOOLCHAIN=auto (the default) fetches the matching
    # toolchain from the proxy.
    if ! (cd "$module" && CGO_ENABLED=0 go build -trimpath "$@" -o "$tmp" "$package"); then
      rm -f "$tmp"
      die "building $package in $module failed"
    fi
    mv -f "$tmp" "$out"
  fi
}

require_node() {
  command -v node >/dev/null 2>&1 || die "Node.js >= 20 is required for the local Cosmos endpoint but 'node' is not on PATH. Install Node 20 LTS (https://nodejs.org/ or 'nvm install 20')."
  command -v npm >/dev/null 2>&1 || die "npm is required to install the local Cosmos endpoint's packages but 'npm' is not on PATH. It ships with Node.js (Debian: apt-get install npm)."
  local v
  v=$(node --version 2>/dev/null)
  v=${v#v}
  version_ge "${v:-0}" 20 || die "Node.js >= 20 is required for the local Cosmos endpoint; found '${v:-unknown}'. Install Node 20 LTS."
}

# Maven: the repo's wrapper when the lead's ./mvnw exists, else mvn from PATH.
maven_cmd() {
  if [[ -x $TALLY_ROOT/mvnw ]]; then
    printf '%s\n' "$TALLY_ROOT/mvnw"
  elif command -v mvn >/dev/null 2>&1; then
    command -v mvn
  else
    die "Maven is required once to download the Kafka jars: neither $TALLY_ROOT/mvnw nor 'mvn' was found. Install Maven 3.8+ (apt-get install maven)."
  fi
}

# The application modules; each builds target/<module>.jar with its runtime class path in target/lib.
APPS=(ingest-app read-service loadgen)

# True when module $1's jar is missing or older than anything it is built from: a file under src/main (sources and
# resources) or the pom of the module or of a module it depends on, the parent pom, or the default grade rules
# rules/default-rules.yaml, which the rules module's jar (on ingest-app's and read-service's class path) carries a copy
# of (loadgen reads the file at run time; a stale copy in a jar would aggregate or serve under other rules than
# loadgen's ground truth).
jar_stale() {
  local jar=$TALLY_ROOT/$1/target/$1.jar m
  [[ -f $jar && ! $TALLY_ROOT/pom.xml -nt $jar ]] || return 0
  local -a inputs=("$TALLY_ROOT/rules/default-rules.yaml")
  for m in config schemas cosmos-model rules "$1"; do inputs+=("$TALLY_ROOT/$m/src/main" "$TALLY_ROOT/$m/pom.xml"); done
  [[ -n $(find "${inputs[@]}" -type f -newer "$jar" -print -quit 2>/dev/null) ]]
}

# Rebuilds the jars of the modules given (default: every application) when anything one is built from is newer than
# it, or it is missing (jar_stale). ./tally runs it before an application; local/stack.sh before ingest-app's topics
# command.
ensure_built() {
  (($#)) || set -- "${APPS[@]}"
  any_stale "$@" || return 0
  mkdir -p "$STATE"
  # One build at a time, checked again under the lock: the demo starts ingest-app and read-service together, and two
  # Maven builds of the same modules at once trip over each other's class files.
  (
    if command -v flock >/dev/null 2>&1; then flock 8; fi
    any_stale "$@" || exit 0
    say "building $(IFS=,; printf '%s' "$*") (./mvnw -DskipTests package; the first build downloads dependencies) ..."
    (cd "$TALLY_ROOT" && ./mvnw -q -B -DskipTests package -pl "$(IFS=,; printf '%s' "$*")" -am) >&2 || exit 1
    # The jar plugin leaves a jar whose content did not change as it was, older than a source merely touched since: mark
    # it built, or every later start would build again.
    for m in "$@"; do touch -c "$TALLY_ROOT/$m/target/$m.jar"; done
  ) 8>"$STATE/build.lock" || die "the build failed; run ./mvnw -DskipTests package to see why"
}

any_stale() { # module...
  local m
  for m in "$@"; do
    if jar_stale "$m"; then return 0; fi
  done
  return 1
}

# True when something accepts TCP connections on 127.0.0.1:$1.
port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# pid from $STATE/run/$1.pid when that process is alive, else nothing (and status 1).
live_pid() {
  local f=$STATE/run/$1.pid pid
  [[ -f $f ]] || return 1
  pid=$(<"$f")
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  printf '%s\n' "$pid"
}

# Start "$@" detached in its own session (pid = process group id), stdout+stderr to $STATE/logs/$name.log
# (the previous log is kept as $name.log.1), pid to $STATE/run/$name.pid.
start_detached() {
  local name=$1
  shift
  local log=$STATE/logs/$name.log
  [[ -f $log ]] && mv -f "$log" "$log.1"
  # The inner shell writes its own pid and then execs the command, so the pid file names the real process
  # even when setsid has to fork.
  # In its own session (setsid, Linux) `down` can signal the whole process group; without setsid (macOS)
  # nohup keeps it alive after this shell and `down` signals the process itself.
  local -a detach=(nohup)
  command -v setsid >/dev/null 2>&1 && detach=(setsid)
  # shellcheck disable=SC2016 # $$ and $@ belong to the inner shell
  "${detach[@]}" bash -c 'echo $$ >"$0"; exec "$@"' "$STATE/run/$name.pid" "$@" </dev/null >"$log" 2>&1 &
  local i
  for ((i = 0; i < 50; i++)); do
    [[ -s $STATE/run/$name.pid ]] && return 0
    sleep 0.1
  done
  die "$name did not start (no pid file); see $log"
}

# Wait until "$2..." succeeds, at most $1 seconds; fails early when pid $PID_TO_WATCH dies.
wait_until() {
  local timeout=$1
  shift
  local deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    "$@" && return 0
    if [[ -n ${PID_TO_WATCH:-} ]] && ! kill -0 "$PID_TO_WATCH" 2>/dev/null; then
      return 2
    fi
    sleep 0.3
  done
  "$@"
}

http_ok() {
  curl -fsS -o /dev/null --max-time 2 "$1" 2>/dev/null
}

# Run a Kafka CLI class from $KAFKA_LIBS: kafka_tool <alias|fully.qualified.Class> [args...].
# A small client JVM (JIT tier 1, serial GC) starts in ~1.5 s instead of ~2.5 s on two cores.
kafka_tool() {
  local cls=$1
  shift
  case $cls in
    topics) cls=org.apache.kafka.tools.TopicCommand ;;
    configs) cls=kafka.admin.ConfigCommand ;;
    console-producer) cls=org.apache.kafka.tools.ConsoleProducer ;;
    console-consumer) cls=org.apache.kafka.tools.consumer.ConsoleConsumer ;;
    consumer-groups) cls=org.apache.kafka.tools.consumer.group.ConsumerGroupCommand ;;
    streams-groups) cls=org.apache.kafka.tools.streams.StreamsGroupCommand ;;
    get-offsets) cls=org.apache.kafka.tools.GetOffsetShell ;;
    api-versions) cls=org.apache.kafka.tools.BrokerApiVersionsCommand ;;
    features) cls=org.apache.kafka.tools.FeatureCommand ;;
    metadata-quorum) cls=org.apache.kafka.tools.MetadataQuorumCommand ;;
    transactions) cls=org.apache.kafka.tools.TransactionsCommand ;;
    storage) cls=kafka.tools.StorageTool ;;
  esac
  [[ -f $KAFKA_LIBS/.complete ]] || die "Kafka jars are missing in $KAFKA_LIBS; run 'local/stack.sh up' (or 'up kafka') once."
  # shellcheck disable=SC2086 # TALLY_KAFKA_TOOL_OPTS is a list of JVM flags
  "$(java_bin)" ${TALLY_KAFKA_TOOL_OPTS:--Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC} \
    -Dlog4j2.configurationFile="$TALLY_ROOT/local/kafka/log4j2.properties" -Dtally.log.level=WARN \
    -cp "$KAFKA_LIBS/*" "$cls" "$@"
}
