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

{{/* cosmos.auth, checked once: a mode the chart knows, and no create-if-missing with Entra ID (the apps refuse it). */}}
{{- define "tally.cosmosAuth" -}}
{{- $auth := .Values.cosmos.auth -}}
{{- if not (has $auth (list "key" "workload-identity" "managed-identity" "service-principal-secret" "default-chain")) -}}
{{- fail (printf "cosmos.auth=%s: must be key, workload-identity, managed-identity, service-principal-secret or default-chain" $auth) -}}
{{- end -}}
{{- if and (ne $auth "key") .Values.cosmos.createIfMissing -}}
{{- fail (printf "cosmos.createIfMissing=true cannot work with cosmos.auth=%s: Cosmos DB does not let an Entra ID token create databases or containers; provision them (docs/azure.md) and keep createIfMissing false" $auth) -}}
{{- end -}}
{{- if and (eq $auth "workload-identity") (not .Values.workloadIdentity.clientId) -}}
{{- fail "workloadIdentity.clientId is required with cosmos.auth=workload-identity (the client id of the managed identity federated with the ServiceAccount)" -}}
{{- end -}}
{{- $auth -}}
{{- end -}}

{{- define "tally.serviceAccountName" -}}
{{- if .Values.serviceAccount.name }}{{ .Values.serviceAccount.name }}{{ else }}{{ include "tally.name" . }}{{ end -}}
{{- end -}}

{{/* Pod labels every workload adds to tally.labels: the workload identity webhook mutates only pods carrying it. */}}
{{- define "tally.podIdentityLabels" -}}
{{- if eq (include "tally.cosmosAuth" .) "workload-identity" -}}
azure.workload.identity/use: "true"
{{- end -}}
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
- name: TALLY_COSMOS_THROUGHPUT
  value: {{ .Values.cosmos.throughput | quote }}
- name: TALLY_COSMOS_THROUGHPUT_RU_PER_SECOND
  value: {{ .Values.cosmos.throughputRuPerSecond | quote }}
{{- $auth := include "tally.cosmosAuth" . }}
- name: TALLY_COSMOS_AUTH
  value: {{ $auth | quote }}
{{- if eq $auth "key" }}
- name: TALLY_COSMOS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "tally.secretName" . }}
      key: cosmos-key
{{- else }}
{{- if .Values.workloadIdentity.clientId }}
- name: TALLY_COSMOS_AUTH_CLIENT_ID
  value: {{ .Values.workloadIdentity.clientId | quote }}
{{- end }}
{{- if .Values.workloadIdentity.tenantId }}
- name: TALLY_COSMOS_AUTH_TENANT_ID
  value: {{ .Values.workloadIdentity.tenantId | quote }}
{{- end }}
{{- if eq $auth "service-principal-secret" }}
- name: TALLY_COSMOS_AUTH_CLIENT_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ include "tally.secretName" . }}
      key: cosmos-client-secret
{{- end }}
{{- end }}
{{- end -}}

{{/* Kafka client settings as --kafka.* flags (the apps' pass-through prefix). */}}
{{- define "tally.kafkaArgs" -}}
{{- range $key, $value := .Values.kafka.clientSettings }}
- --kafka.{{ $key }}={{ $value }}
{{- end }}
{{- end -}}
