#!/usr/bin/env bash
# Builds AxonOps Schema Registry (Confluent-compatible REST API), at the version pinned in go.mod/go.sum
# here, from the Go module proxy. Used by local/stack.sh and by the Java tests (LocalSchemaRegistry).
#
#   local/schema-registry/build.sh [output]     default output: $STATE/bin/schema-registry
#
# Skips the build when the output exists and is newer than go.mod, go.sum and this script. Prints the
# binary's path on stdout; progress on stderr. Cold: ~2 min on two cores (download + compile), then instant.
# `go install github.com/axonops/axonops-schema-registry/cmd/schema-registry@v0.2.1` does not work against
# the proxy here (its list call fails); this tools module does.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

out=${1:-$STATE/bin/schema-registry}
version=$(awk '$1 == "require" && $2 ~ /axonops-schema-registry$/ { print $3 }' "$here/go.mod")
go_build_pinned "$here" github.com/axonops/axonops-schema-registry/cmd/schema-registry "$out" \
  "schema-registry ${version:-?} (first time ~2 min)" -ldflags "-s -w -X main.version=${version:-unknown}"
printf '%s\n' "$out"
