{{- define "tally.name" -}}{{ .Release.Name }}{{- end -}}

{{- define "tally.labels" -}}
app.kubernetes.io/name: tally
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}

{{/* Selector labels of one component: aggregation, sink or read. */}}
{{- define "tally.selector" -}}
app.kubernetes.io/name: tally
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "tally.secretName" -}}
{{- if .Values.secrets.existingSecret }}{{ .Values.secrets.existingSecret }}{{ else }}{{ .Release.Name }}-secrets{{ end -}}
{{- end -}}

{{/* Kafka, registry and topic settings of ingest-app (both roles). */}}
{{- define "tally.kafkaEnv" -}}
- name: TALLY_KAFKA_BOOTSTRAP_SERVERS
  value: {{ .Values.kafka.bootstrapServers | quote }}
- name: TALLY_SCHEMA_REGISTRY_URL
  value: {{ .Values.schemaRegistry.url | quote }}
- name: TALLY_TOPICS_PREFIX
  value: {{ .Values.topics.prefix | quote }}
- name: TALLY_TOPICS_CREATE_MISSING
  value: {{ .Values.topics.createMissing | quote }}
{{- end -}}

{{- define "tally.cosmosEnv" -}}
- name: TALLY_COSMOS_ENDPOINT
  value: {{ .Values.cosmos.endpoint | quote }}
- name: TALLY_COSMOS_DATABASE
  value: {{ .Values.cosmos.database | quote }}
- name: TALLY_COSMOS_CONTAINER
  value: {{ .Values.cosmos.container | quote }}
- name: TALLY_COSMOS_CONNECTION_MODE
  value: {{ .Values.cosmos.connectionMode | quote }}
- name: TALLY_COSMOS_PREFERRED_REGIONS
  value: {{ .Values.cosmos.preferredRegions | quote }}
- name: TALLY_COSMOS_CREATE_IF_MISSING
  value: {{ .Values.cosmos.createIfMissing | quote }}
- name: TALLY_COSMOS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "tally.secretName" . }}
      key: cosmos-key
{{- end -}}

{{/* Kafka client settings as --kafka.* flags (the apps' pass-through prefix). */}}
{{- define "tally.kafkaArgs" -}}
{{- range $key, $value := .Values.kafka.clientSettings }}
- --kafka.{{ $key }}={{ $value }}
{{- end }}
{{- end -}}
