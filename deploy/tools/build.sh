#!/usr/bin/env bash
# Builds one of the operations tools that check deploy/ — promtool, helm, kubeconform — at the version pinned
# in deploy/tools/TOOL/go.mod and go.sum, from the Go module proxy (the way local/schema-registry/build.sh
# builds the schema registry). Used by the tests module (OpsTools) and by hand.
#
#   deploy/tools/build.sh TOOL [output]     default output: $STATE/bin/TOOL
#
# Skips the build when the output exists and is newer than the tool's go.mod, go.sum and this script.
# Prints the binary's path on stdout; progress on stderr. Cold: a few minutes each on two cores.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../../local/lib/common.sh
. "$here/../../local/lib/common.sh"

tool=${1:?usage: deploy/tools/build.sh promtool|helm|kubeconform [output]}
case $tool in
  promtool) package=github.com/prometheus/prometheus/cmd/promtool ;;
  helm) package=helm.sh/helm/v3/cmd/helm ;;
  kubeconform) package=github.com/yannh/kubeconform/cmd/kubeconform ;;
  *) die "unknown tool '$tool' (promtool, helm or kubeconform)" ;;
esac
out=${2:-$STATE/bin/$tool}
go_build_pinned "$here/$tool" "$package" "$out" "$tool ($package, pinned in deploy/tools/$tool/go.mod)" -ldflags "-s -w"
printf '%s\n' "$out"
