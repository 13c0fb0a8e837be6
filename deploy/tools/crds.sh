#!/usr/bin/env bash
# Prints the directory of the monitoring.coreos.com CustomResourceDefinitions (ServiceMonitor, PrometheusRule,
# ...) of the prometheus-operator release pinned in deploy/tools/crds/go.mod and go.sum, downloaded once from
# the Go module proxy into Go's module cache (checked against go.sum). The chart test turns the
# ServiceMonitor's openAPIV3Schema into a schema for kubeconform.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../../local/lib/common.sh
. "$here/../../local/lib/common.sh"
require_go
dir=$(cd "$here/crds" && go mod download -json github.com/prometheus-operator/prometheus-operator \
  | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -n $dir && -d $dir/example/prometheus-operator-crd ]] || die "prometheus-operator's CRDs not found (go mod download in $here/crds)"
printf '%s\n' "$dir/example/prometheus-operator-crd"
