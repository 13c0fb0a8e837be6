//go:build tools

// Package tools pins promtool (go.mod, go.sum) so that deploy/tools/build.sh compiles it from the Go module
// proxy at an exact version; the tests of deploy/ run it.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
