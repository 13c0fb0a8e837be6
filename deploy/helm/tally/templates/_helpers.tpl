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
{{ include "tally.registryEnv" . }}
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

{{/*
Kafka client settings as --kafka.* flags (the apps' pass-through prefix). A setting that holds a secret is a file of the
Secret mounted at tally.kafkaSecretDir and read by Kafka's own DirectoryConfigProvider when the client starts: the flag
carries only the reference ${tally-secrets:DIR:FILE}, so no password is in args, env, a ConfigMap or `ps` output.
*/}}
{{- define "tally.kafkaArgs" -}}
{{- range $key, $value := .Values.kafka.clientSettings }}
{{- if has $key (include "tally.kafkaSecretSettings" $ | fromJsonArray) }}
{{- fail (printf "kafka.clientSettings.%s is also a secret setting: set it in secrets.kafka only" $key) }}
{{- end }}
- --kafka.{{ $key }}={{ $value }}
{{- end }}
{{- $secretSettings := include "tally.kafkaSecretSettings" . | fromJsonArray }}
{{- if or $secretSettings (include "tally.kafkaTruststore" .) (include "tally.kafkaKeystore" .) }}
- --kafka.config.providers=tally-secrets
- --kafka.config.providers.tally-secrets.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider
{{- end }}
{{- range $secretSettings }}
- --kafka.{{ . }}=${tally-secrets:{{ include "tally.kafkaSecretDir" $ }}:kafka.{{ . }}}
{{- end }}
{{- if include "tally.kafkaTruststore" . }}
- --kafka.ssl.truststore.location={{ include "tally.kafkaSecretDir" . }}/kafka-truststore
{{- end }}
{{- if include "tally.kafkaKeystore" . }}
- --kafka.ssl.keystore.location={{ include "tally.kafkaSecretDir" . }}/kafka-keystore
{{- end }}
{{- end -}}

{{- define "tally.kafkaSecretDir" -}}/etc/tally/kafka{{- end -}}

{{/* Kafka settings read from the Secret, as a JSON list: the keys of secrets.kafka and kafka.secretSettings. */}}
{{- define "tally.kafkaSecretSettings" -}}
{{- $names := concat (keys .Values.secrets.kafka) .Values.kafka.secretSettings | uniq | sortAlpha -}}
{{- range $names }}
{{- if hasSuffix ".location" . }}
{{- fail (printf "kafka setting %s: a key store is a file, not a setting value; use secrets.kafkaTruststore or secrets.kafkaKeystore" .) }}
{{- end }}
{{- end }}
{{- toJson $names -}}
{{- end -}}

{{- define "tally.kafkaTruststore" -}}{{ if or .Values.secrets.kafkaTruststore .Values.kafka.truststore }}true{{ end }}{{- end -}}

{{- define "tally.kafkaKeystore" -}}{{ if or .Values.secrets.kafkaKeystore .Values.kafka.keystore }}true{{ end }}{{- end -}}

{{/* The volume of Kafka's secret files: only those keys of the Secret, never the Cosmos key or the API keys. */}}
{{- define "tally.kafkaSecretVolume" -}}
{{- $secretSettings := include "tally.kafkaSecretSettings" . | fromJsonArray }}
{{- if or $secretSettings (include "tally.kafkaTruststore" .) (include "tally.kafkaKeystore" .) }}
- name: kafka-secrets
  secret:
    secretName: {{ include "tally.secretName" . }}
    defaultMode: 0440
    items:
      {{- range $secretSettings }}
      - {key: kafka.{{ . }}, path: kafka.{{ . }}}
      {{- end }}
      {{- if include "tally.kafkaTruststore" . }}
      - {key: kafka-truststore, path: kafka-truststore}
      {{- end }}
      {{- if include "tally.kafkaKeystore" . }}
      - {key: kafka-keystore, path: kafka-keystore}
      {{- end }}
{{- end }}
{{- end -}}

{{- define "tally.kafkaSecretMount" -}}
{{- if include "tally.kafkaSecretVolume" . }}
- name: kafka-secrets
  mountPath: {{ include "tally.kafkaSecretDir" . }}
  readOnly: true
{{- end }}
{{- end -}}

{{/* The schema registry's basic-auth (schema.registry.basic-auth.user-info) from the Secret, when it needs one. */}}
{{- define "tally.registryAuth" -}}{{ if or .Values.secrets.registryUserInfo .Values.schemaRegistry.basicAuth }}true{{ end }}{{- end -}}

{{- define "tally.registryEnv" -}}
- name: TALLY_SCHEMA_REGISTRY_URL
  value: {{ .Values.schemaRegistry.url | quote }}
{{- if include "tally.registryAuth" . }}
- name: TALLY_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO
  valueFrom:
    secretKeyRef:
      name: {{ include "tally.secretName" . }}
      key: schema-registry-user-info
{{- end }}
{{- end -}}

{{/*
The user's rules and sources files: a ConfigMap the chart makes from rules.rulesYaml / rules.sourcesYaml, or
rules.existingConfigMap (keys rules.yaml and sources.yaml). Empty = the files shipped in the image.
*/}}
{{- define "tally.rulesConfigMap" -}}
{{- if .Values.rules.existingConfigMap }}{{ .Values.rules.existingConfigMap }}{{ else if or .Values.rules.rulesYaml .Values.rules.sourcesYaml }}{{ .Release.Name }}-rules{{ end -}}
{{- end -}}

{{- define "tally.rulesDir" -}}/etc/tally/rules{{- end -}}

{{- define "tally.hasRules" -}}{{ if or .Values.rules.existingConfigMap .Values.rules.rulesYaml }}true{{ end }}{{- end -}}

{{- define "tally.hasSources" -}}{{ if or .Values.rules.existingConfigMap .Values.rules.sourcesYaml }}true{{ end }}{{- end -}}

{{/* ingest-app's rules and sources settings (the aggregation, the sink, the rules check). */}}
{{- define "tally.ingestRulesEnv" -}}
{{- if include "tally.hasRules" . }}
- name: TALLY_INGEST_RULES_FILE
  value: {{ include "tally.rulesDir" . }}/rules.yaml
{{- end }}
{{- if include "tally.hasSources" . }}
- name: TALLY_INGEST_SOURCES_FILE
  value: {{ include "tally.rulesDir" . }}/sources.yaml
{{- end }}
{{- end -}}

{{- define "tally.rulesVolume" -}}
{{- with include "tally.rulesConfigMap" . }}
- name: rules
  configMap:
    name: {{ . }}
{{- end }}
{{- end -}}

{{- define "tally.rulesMount" -}}
{{- if include "tally.rulesConfigMap" . }}
- name: rules
  mountPath: {{ include "tally.rulesDir" . }}
  readOnly: true
{{- end }}
{{- end -}}

{{/*
Pod annotations that change with what the pods read at start, so `helm upgrade` rolls them: the rules and sources (by
content, or by name for a ConfigMap you manage: rename it to roll) and the Secret the chart makes (by a hash only).
*/}}
{{- define "tally.checksums" -}}
checksum/rules: {{ list .Values.rules.rulesYaml .Values.rules.sourcesYaml .Values.rules.existingConfigMap | toJson | sha256sum }}
{{- if not .Values.secrets.existingSecret }}
checksum/secret: {{ include (print $.Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
{{- end -}}

{{/*
`rules check` before the app starts: the rules and sources are resolved against the registry's latest schemas, and a
file that does not fit stops the pod in Init, so a rollout halts before any pod counts with it (exit 1 = a path does
not fit or the registry could not be asked, 2 = a file does not parse; the init container's log says which).
*/}}
{{- define "tally.rulesCheck" -}}
{{- if and .Values.rules.check.enabled (or (include "tally.hasRules" .) (include "tally.hasSources" .)) }}
- name: rules-check
  image: {{ .Values.image.ingestApp }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args: ["rules", "check"]
  env:
    {{- include "tally.ingestRulesEnv" . | trim | nindent 4 }}
    {{- include "tally.registryEnv" . | trim | nindent 4 }}
    - name: TALLY_TOPICS_PREFIX
      value: {{ .Values.topics.prefix | quote }}
    - name: JAVA_OPTS
      value: {{ .Values.rules.check.javaOpts | quote }}
  resources:
    {{- toYaml .Values.rules.check.resources | nindent 4 }}
  volumeMounts:
    {{- include "tally.rulesMount" . | trim | nindent 4 }}
{{- end }}
{{- end -}}
