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
mkdir -p "$(dirname "$out")"

up_to_date() {
  [[ -x $out && $out -nt $here/go.sum && $out -nt $here/go.mod && $out -nt $here/build.sh ]]
}

if ! up_to_date; then
  # Java test JVMs and the stack script may build at the same time: one builds, the others wait.
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$(dirname "$out")/.$(basename "$out").lock"
    flock 9
  fi
fi
if ! up_to_date; then
  require_go
  version=$(awk '$1 == "require" && $2 ~ /axonops-schema-registry$/ { print $3 }' "$here/go.mod")
  say "building schema-registry ${version:-?} -> $out (first time ~2 min)"
  tmp=$out.tmp.$$
  trap 'rm -f "$tmp"' EXIT
  # CGO off: a static binary and no C compiler needed. If the local Go is older than the go line in
  # go.mod, GOTOOLCHAIN=auto (the default) fetches the matching toolchain from the proxy.
  (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${version:-unknown}" \
    -o "$tmp" github.com/axonops/axonops-schema-registry/cmd/schema-registry)
  mv -f "$tmp" "$out"
  trap - EXIT
fi
printf '%s\n' "$out"
