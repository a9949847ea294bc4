{{/*
Helpers of the platform chart; every name starts with "platform." so that a parent chart's
helpers cannot collide with them.
*/}}

{{/* The chart name, or nameOverride. */}}
{{- define "platform.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The prefix of every resource name: fullnameOverride, else "<release>-<name>" (just the release when it contains the name). */}}
{{- define "platform.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "platform.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The name of a component's resources. Call with (dict "root" $ "component" "edge"). */}}
{{- define "platform.componentName" -}}
{{- printf "%s-%s" (include "platform.fullname" .root | trunc 50 | trimSuffix "-") .component -}}
{{- end -}}

{{/* The edge's public origin: edge.publicUrl, else its Service's in-cluster URL. The edge serves it; the operator writes it into tenants' connection Secrets. */}}
{{- define "platform.publicUrl" -}}
{{- default (printf "http://%s.%s.svc:%d" (include "platform.componentName" (dict "root" . "component" "edge")) .Release.Namespace (int .Values.edge.service.port)) .Values.edge.publicUrl -}}
{{- end -}}

{{/* Labels of every resource. Call with (dict "root" $ "component" "edge"); component may be empty. */}}
{{- define "platform.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "platform.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: svc-platform
{{- end -}}

{{/* Labels that select a component's pods. Call with (dict "root" $ "component" "edge"). */}}
{{- define "platform.selectorLabels" -}}
app.kubernetes.io/name: {{ include "platform.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- if .component }}
app.kubernetes.io/component: {{ .component }}
{{- end }}
{{- end -}}

{{/* The image reference. */}}
{{- define "platform.image" -}}
{{- $repository := required "image.repository is required: the image built from the repository's Dockerfile" .Values.image.repository -}}
{{- printf "%s:%s" $repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The Secret and key holding the PostgreSQL URL. */}}
{{- define "platform.postgresqlSecretName" -}}
{{- if .Values.postgresql.existingSecret.name -}}
{{- .Values.postgresql.existingSecret.name -}}
{{- else if .Values.postgresql.url -}}
{{- printf "%s-postgresql" (include "platform.fullname" .) -}}
{{- else -}}
{{- fail "postgresql.existingSecret.name is required: a Secret holding the PostgreSQL URL (or set postgresql.url for a trial)" -}}
{{- end -}}
{{- end -}}

{{- define "platform.postgresqlSecretKey" -}}
{{- if .Values.postgresql.existingSecret.name -}}{{ .Values.postgresql.existingSecret.key }}{{- else -}}url{{- end -}}
{{- end -}}

{{/* The Secret holding the edge's sign-in cookie key: the one given, else the chart's own. */}}
{{- define "platform.signInKeySecretName" -}}
{{- default (printf "%s-sign-in" (include "platform.componentName" (dict "root" . "component" "edge"))) .Values.edge.signInKey.existingSecret.name -}}
{{- end -}}

{{/* The Secret holding the control plane's secrets key: the one given, else the chart's own. */}}
{{- define "platform.secretsKeySecretName" -}}
{{- default (printf "%s-secrets-key" (include "platform.componentName" (dict "root" . "component" "control-plane"))) .Values.controlPlane.secretsKey.existingSecret.name -}}
{{- end -}}

{{/* The Secret holding the credential the edge calls the control plane with: the one given, else the chart's own. */}}
{{- define "platform.controlPlaneTokenSecretName" -}}
{{- default (printf "%s-token" (include "platform.componentName" (dict "root" . "component" "control-plane"))) .Values.controlPlane.token.existingSecret.name -}}
{{- end -}}

{{/* CONTROL_PLANE_TOKEN, for the edge (which sends it) and the control plane (which requires it). */}}
{{- define "platform.env.controlPlaneToken" -}}
- name: CONTROL_PLANE_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "platform.controlPlaneTokenSecretName" . }}
      key: {{ .Values.controlPlane.token.existingSecret.key }}
{{- end -}}

{{/* The operator's ServiceAccount. */}}
{{- define "platform.operatorServiceAccountName" -}}
{{- default (include "platform.componentName" (dict "root" . "component" "operator")) .Values.operator.serviceAccount.name -}}
{{- end -}}

{{/* The operator's leader-election Lease. */}}
{{- define "platform.operatorLeaseName" -}}
{{- required "operator.leaderElection.leaseName is required" .Values.operator.leaderElection.leaseName -}}
{{- end -}}

{{/* The ServiceAccount of the edge, control plane and workers, which never call the Kubernetes API. */}}
{{- define "platform.workloadServiceAccountName" -}}
{{- include "platform.componentName" (dict "root" . "component" "workload") -}}
{{- end -}}

{{/* The control plane's in-cluster URL, which the edge calls. */}}
{{- define "platform.controlPlaneUrl" -}}
{{- printf "http://%s:%d" (include "platform.componentName" (dict "root" . "component" "control-plane")) (int .Values.controlPlane.port) -}}
{{- end -}}

{{/* Environment shared by every component. */}}
{{- define "platform.env.common" -}}
- name: NODE_ENV
  value: production
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "platform.postgresqlSecretName" . }}
      key: {{ include "platform.postgresqlSecretKey" . }}
{{- with .Values.postgresql.tenantLogin.existingSecret }}
{{- if .name }}
- name: TENANT_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .name }}
      key: {{ .key }}
{{- end }}
{{- end }}
- name: SVC_STATE_DIR
  value: /tmp/svc/state
- name: SVC_CACHE_DIR
  value: /tmp/svc/cache
- name: SVC_DEV_SEED
  value: "false"
- name: METRICS_PORT
  value: {{ .Values.metrics.port | quote }}
- name: DB_CONNECT_TIMEOUT_SECONDS
  value: {{ .Values.postgresql.timeouts.connectSeconds | quote }}
- name: DB_STATEMENT_TIMEOUT_MS
  value: {{ .Values.postgresql.timeouts.statementMs | quote }}
- name: DB_IDLE_TIMEOUT_SECONDS
  value: {{ .Values.postgresql.timeouts.idleSeconds | quote }}
- name: DB_ACQUIRE_TIMEOUT_MS
  value: {{ .Values.postgresql.timeouts.acquireMs | quote }}
- name: SHUTDOWN_GRACE_SECONDS
  value: {{ .Values.shutdown.graceSeconds | quote }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Token verification, for the components that authenticate callers (edge, control plane). */}}
{{- define "platform.env.identity" -}}
- name: AUTH_ISSUER
  value: {{ required "identity.issuer is required: the OIDC provider's issuer (the chart does not run the built-in development provider)" .Values.identity.issuer | quote }}
- name: AUTH_AUDIENCE
  value: {{ .Values.identity.audience | quote }}
- name: AUTH_JWKS_URL
  value: {{ required "identity.jwksUrl is required: the OIDC provider's JSON Web Key Set URL" .Values.identity.jwksUrl | quote }}
- name: AUTH_TENANT_CLAIM
  value: {{ .Values.identity.tenantClaim | quote }}
- name: AUTH_FIRST_PARTY_CLIENTS
  value: {{ append .Values.identity.firstPartyClients .Values.identity.bff.clientId | uniq | join "," | quote }}
- name: AUTH_TOKENS_WITHOUT_CLIENT
  value: {{ .Values.identity.tokensWithoutClient | quote }}
{{- end -}}

{{/* Temporal, Qdrant and the blob store, for the components that run domain services (control plane, workers, operator). */}}
{{- define "platform.env.services" -}}
- name: TEMPORAL_ADDRESS
  value: {{ required "temporal.address is required: the Temporal frontend (host:port)" .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: TEMPORAL_TASK_QUEUE
  value: {{ .Values.temporal.taskQueue | quote }}
- name: SVC_BLOB_DIR
  value: /var/lib/svc/blobs
{{- with .Values.plans.defaultPlan }}
- name: DEFAULT_PLAN
  value: {{ . | quote }}
{{- end }}
{{- with .Values.qdrant.url }}
- name: QDRANT_URL
  value: {{ . | quote }}
{{- end }}
{{- if .Values.qdrant.apiKeySecret.name }}
- name: QDRANT_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.qdrant.apiKeySecret.name }}
      key: {{ .Values.qdrant.apiKeySecret.key }}
{{- end }}
{{- end -}}

{{/* Volumes of every pod: /tmp (the root filesystem is read-only). With blobs=true also the blob store. Call with (dict "root" $ "blobs" true). */}}
{{- define "platform.volumes" -}}
- name: tmp
  emptyDir: {}
{{- if .blobs }}
- name: blobs
{{- if .root.Values.blobStore.existingClaim }}
  persistentVolumeClaim:
    claimName: {{ .root.Values.blobStore.existingClaim }}
{{- else }}
  emptyDir: {}
{{- end }}
{{- end }}
{{- end -}}

{{- define "platform.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
{{- if .blobs }}
- name: blobs
  mountPath: /var/lib/svc/blobs
{{- end }}
{{- end -}}

{{/*
Startup and liveness probes on GET <live>, readiness on GET <ready>, at the named port: liveness
never depends on the database, so an outage takes pods out of service without restarting them.
Call with (dict "live" "/health/live" "ready" "/health/ready" "port" "http").
*/}}
{{- define "platform.probes" -}}
startupProbe:
  httpGet:
    path: {{ .live }}
    port: {{ .port }}
  periodSeconds: 2
  failureThreshold: 60
readinessProbe:
  httpGet:
    path: {{ .ready }}
    port: {{ .port }}
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
livenessProbe:
  httpGet:
    path: {{ .live }}
    port: {{ .port }}
  periodSeconds: 20
  timeoutSeconds: 5
  failureThreshold: 6
{{- end -}}

{{/* The drained stop of a component that serves requests: the preStop sleep, then SIGTERM and the grace. */}}
{{- define "platform.terminationGracePeriodSeconds" -}}
{{- add .Values.shutdown.preStopSleepSeconds .Values.shutdown.graceSeconds 5 -}}
{{- end -}}

{{/* The preStop hook that keeps a pod serving while Kubernetes takes it out of the endpoints (Kubernetes 1.30+: no shell needed in the image). */}}
{{- define "platform.preStop" -}}
lifecycle:
  preStop:
    sleep:
      seconds: {{ .Values.shutdown.preStopSleepSeconds }}
{{- end -}}

{{/*
A component's NetworkPolicy: ingress only on the listed ports, each from its peers ([] admits any
source). Egress is not restricted. Call with (dict "root" $ "component" "edge" "rules" (list (dict "port" "http" "from" list))).
*/}}
{{- define "platform.networkPolicy" -}}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "platform.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "platform.labels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "platform.selectorLabels" . | nindent 6 }}
  policyTypes: [Ingress]
  ingress:
    {{- range .rules }}
    - ports:
        - port: {{ .port }}
          protocol: TCP
      {{- with .from }}
      from:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- end }}
{{- end -}}

{{/* A component's PodDisruptionBudget. Call with (dict "root" $ "component" "edge" "values" .Values.edge). */}}
{{- define "platform.pdb" -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "platform.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "platform.labels" . | nindent 4 }}
spec:
  maxUnavailable: {{ .values.pdb.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "platform.selectorLabels" . | nindent 6 }}
{{- end -}}

{{/*
Keys this chart does not take, with what to use instead: keys of earlier layouts of these values
and names that the platform's own settings use. values.schema.json admits them so that the render
can fail with this message rather than a bare "additional property" error.
*/}}
{{- define "platform.removedValues" -}}
workers: "worker: the component and its role are named in the singular"
databaseUrl: "postgresql.existingSecret (a Secret holding the URL), or postgresql.url for a trial"
temporalAddress: "temporal.address"
{{- end -}}

{{/* Fails the render when a removed key is set. */}}
{{- define "platform.checkRemovedValues" -}}
{{- range $key, $instead := include "platform.removedValues" . | fromYaml -}}
{{- if hasKey $.Values $key -}}
{{- fail (printf "the value %q was removed from this chart; use %s" $key $instead) -}}
{{- end -}}
{{- end -}}
{{- end -}}
