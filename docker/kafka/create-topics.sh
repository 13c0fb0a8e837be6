#!/usr/bin/env bash
# One-shot topic provisioning for docker-compose.yml (service kafka-init, image apache/kafka).
#
# Reads TOPICS_SPEC, one topic a line in the format of local/kafka/topics.conf:
#     <name> <partitions> <k=v,k=v | ->        (# starts a comment)
# and for each topic: creates it when missing (replication factor 1, single broker), raises a lower
# partition count (Kafka cannot lower one: that only warns), sets the listed configs, and finally
# waits until every partition of every listed topic has a leader. Producers must not start before
# that (KAFKA-15591: an idempotent producer writing right after createTopics can lose a batch), so
# the apps depend on this service with condition service_completed_successfully.
#
# Environment: BOOTSTRAP_SERVERS (required), TOPICS_SPEC (required), WAIT_TIMEOUT_S (default 120),
# KAFKA_BIN (default /opt/kafka/bin, where the apache/kafka image keeps the CLI tools).
set -euo pipefail

: "${BOOTSTRAP_SERVERS:?BOOTSTRAP_SERVERS is required}"
: "${TOPICS_SPEC:?TOPICS_SPEC is required}"
WAIT_TIMEOUT_S=${WAIT_TIMEOUT_S:-120}
KAFKA_BIN=${KAFKA_BIN:-/opt/kafka/bin}
# The CLI tools need little memory; do not inherit a broker-sized heap.
export KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xmx256m}

say() { printf 'kafka-init: %s\n' "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }

topics() { "$KAFKA_BIN/kafka-topics.sh" --bootstrap-server "$BOOTSTRAP_SERVERS" "$@"; }

# Partitions of a topic that currently have a leader (a broker id, not -1 or none).
led_partitions() {
  topics --describe --topic "$1" 2>/dev/null | grep -cE 'Partition: [0-9]+[[:space:]]+Leader: [0-9]+' || true
}

partition_count() {
  topics --describe --topic "$1" 2>/dev/null | grep -cE 'Partition: [0-9]+' || true
}

deadline=$((SECONDS + WAIT_TIMEOUT_S))
until topics --list >/dev/null 2>&1; do
  ((SECONDS < deadline)) || die "no broker answered at $BOOTSTRAP_SERVERS within ${WAIT_TIMEOUT_S}s"
  say "waiting for the broker at $BOOTSTRAP_SERVERS ..."
  sleep 2
done

# Kafka 4.3.1's default transaction.version=2 makes exactly-once Streams producers fail again and again
# with OutOfOrderSequenceException on internal topics (docs/aggregation.md, Kafka version).
"$KAFKA_BIN/kafka-features.sh" --bootstrap-server "$BOOTSTRAP_SERVERS" downgrade --feature transaction.version=1 >&2 ||
  die "could not set transaction.version=1"

names=() wanted=()
while read -r name partitions configs rest; do
  [[ -z ${name:-} || $name == \#* ]] && continue
  [[ -z ${rest:-} ]] || die "line for topic '$name' has more than three columns: '$rest'"
  [[ $partitions =~ ^[1-9][0-9]*$ ]] || die "topic '$name': partitions must be a positive number, got '${partitions:-}'"
  configs=${configs:--}
  names+=("$name") wanted+=("$partitions")

  create_args=(--create --if-not-exists --topic "$name" --partitions "$partitions" --replication-factor 1)
  if [[ $configs != - ]]; then
    IFS=, read -r -a pairs <<<"$configs"
    for kv in "${pairs[@]}"; do
      [[ $kv == *=* ]] || die "topic '$name': config '$kv' is not key=value"
      create_args+=(--config "$kv")
    done
  fi
  topics "${create_args[@]}" >/dev/null

  have=$(partition_count "$name")
  if ((have < partitions)); then
    say "$name: raising partitions from $have to $partitions"
    topics --alter --topic "$name" --partitions "$partitions" >/dev/null
  elif ((have > partitions)); then
    say "WARNING: $name has $have partitions, more than the $partitions listed; Kafka cannot lower a partition count"
  fi
  if [[ $configs != - ]]; then
    # Idempotent: also corrects the configs of a topic that existed before with other values.
    "$KAFKA_BIN/kafka-configs.sh" --bootstrap-server "$BOOTSTRAP_SERVERS" --alter --entity-type topics \
      --entity-name "$name" --add-config "$configs" >/dev/null
  fi
  say "$name: $partitions partitions, configs: $configs"
done <<<"$TOPICS_SPEC"

((${#names[@]} > 0)) || die "TOPICS_SPEC lists no topic"

for i in "${!names[@]}"; do
  name=${names[$i]} want=${wanted[$i]}
  until (( $(led_partitions "$name") >= want )); do
    ((SECONDS < deadline)) || die "$name: not every partition has a leader after ${WAIT_TIMEOUT_S}s"
    say "$name: waiting for partition leaders ..."
    sleep 1
  done
done

say "all topics ready: ${names[*]}"
topics --describe --topic "$(IFS='|'; printf '%s' "${names[*]}")" >&2 || true
