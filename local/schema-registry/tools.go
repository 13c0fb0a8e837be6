//go:build tools

// Package tools pins the AxonOps Schema Registry (Confluent-compatible REST API) so that
// build.sh can compile it from the Go module proxy at an exact version. `go install ...@v0.2.1`
// fails on the proxy's list call; a tools module with go.sum is reproducible and works.
package tools

import (
	_ "github.com/axonops/axonops-schema-registry/cmd/schema-registry"
)
