// Pins the prometheus-operator module for its CustomResourceDefinitions (example/prometheus-operator-crd), the
// schema of the chart's ServiceMonitor; nothing here is compiled (deploy/tools/crds.sh).
module tally.local/crds

go 1.26.0

require github.com/prometheus-operator/prometheus-operator v0.85.0
