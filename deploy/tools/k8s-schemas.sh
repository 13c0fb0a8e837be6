#!/usr/bin/env bash
# Puts the Kubernetes API's JSON schemas, in the layout kubeconform reads, under $STATE/k8s-schemas, without
# the internet: they come from the PyPI package kubernetes-validate (pinned below), which ships the schemas
# generated from each Kubernetes release's OpenAPI document. kubeconform's own default downloads them from a
# web host, which is not reachable here.
#
#   deploy/tools/k8s-schemas.sh [output-dir]     default: $STATE/k8s-schemas
#
# Prints the directory on stdout. The package's schemas carry web $id's and point at their shared definitions
# as /api/_definitions.json, resolved against those $id's by its own Python loader; here the $id's are dropped
# and the reference made relative (_definitions.json), so a file-based validator finds it next to each schema.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../../local/lib/common.sh
. "$here/../../local/lib/common.sh"

package_version=1.37.0
out=${1:-$STATE/k8s-schemas}
stamp=$out/.kubernetes-validate-$package_version
mkdir -p "$out"
if [[ -f $stamp && $stamp -nt $here/k8s-schemas.sh ]]; then
  printf '%s\n' "$out"
  exit 0
fi
exec 9>"$out/.lock"
flock 9
if [[ ! -f $stamp || $here/k8s-schemas.sh -nt $stamp ]]; then
  command -v python3 >/dev/null 2>&1 || die "python3 with pip is needed once to fetch the Kubernetes schemas (Debian: apt-get install python3-pip)"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  say "fetching the Kubernetes JSON schemas (PyPI kubernetes-validate $package_version) -> $out"
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "kubernetes-validate==$package_version" >&2
  python3 - "$tmp"/kubernetes_validate-*.whl "$out" <<'PY'
import json, os, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
prefix = "kubernetes_validate/kubernetes-json-schema/"
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        name = info.filename
        # Only the strict variants: they also reject fields the API does not know (a typo in a manifest).
        if not name.startswith(prefix) or not name.endswith(".json") or "-local-strict/" not in name:
            continue
        target = os.path.join(out, name[len(prefix):])
        os.makedirs(os.path.dirname(target), exist_ok=True)
        schema = json.loads(z.read(name).decode("utf-8").replace('"/api/_definitions.json#', '"_definitions.json#'))
        schema.pop("$id", None)
        with open(target, "w", encoding="utf-8") as f:
            json.dump(schema, f)
PY
  touch "$stamp"
fi
printf '%s\n' "$out"
