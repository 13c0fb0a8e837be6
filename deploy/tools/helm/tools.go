//go:build tools

// Package tools pins helm (go.mod, go.sum) so that deploy/tools/build.sh compiles it from the Go module
// proxy at an exact version; the tests of deploy/ run it.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
