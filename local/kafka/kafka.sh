#!/usr/bin/env bash
# Kafka CLI classes from the local stack's jars ($STATE/kafka/libs), without a Kafka tarball.
#
#   local/kafka/kafka.sh <tool> [args...]      tool: topics, configs, console-producer, console-consumer,
#                                              consumer-groups, streams-groups, get-offsets, api-versions,
#                                              features, metadata-quorum, transactions, storage,
#                                              or any fully qualified main class in the jars
# e.g.
#   local/kafka/kafka.sh topics --bootstrap-server 127.0.0.1:9092 --describe --topic transactions
#   local/kafka/kafka.sh console-consumer --bootstrap-server 127.0.0.1:9092 --topic transactions --from-beginning
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

if [[ $# -eq 0 || $1 == -h || $1 == --help ]]; then
  sed -n '2,10s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
  say "Broker of the local stack: 127.0.0.1:$TALLY_KAFKA_PORT"
  exit 2
fi
require_java
kafka_tool "$@"
