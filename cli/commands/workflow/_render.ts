import { fields, table, type TextRenderer } from '../../output.ts';
import type { ProvisionResult, Readiness, RuntimeRequest, WorkflowStatus } from '../../services/workflows.service.ts';

export const renderProvision: TextRenderer<ProvisionResult> = (result, style) => {
  const lines = [table(['TYPE', 'ACTION', 'ID', 'VERSION'], result.resources.map((r) => [r.type, r.action, r.id, String(r.version)]), style)];
  lines.push('', ...Object.entries(result.env).map(([key, value]) => `${key}=${value}`));
  if (result.localEnv) {
    const changed = result.localEnv.changes.filter((c) => c.action !== 'unchanged').length;
    lines.push(`${result.localEnv.file}: ${changed} of ${result.localEnv.changes.length} value(s) written`);
  }
  if (result.appConfig) {
    const changed = result.appConfig.changes.filter((c) => c.action !== 'unchanged').length;
    lines.push(`configuration ${result.appConfig.label}/${result.appConfig.environment}: ${changed} of ${result.appConfig.changes.length} value(s) written`);
  }
  lines.push(style.colors.dim(`svc workflow status ${result.workflowKey} tells whether chat can use it`));
  return lines.join('\n');
};

export const renderStatus: TextRenderer<WorkflowStatus> = (status, style) =>
  fields(
    [
      ['workflow', status.workflowKey],
      ['status', status.status],
      ['reason', status.reason],
      ['display name', status.displayName ?? '-'],
      ['provider', status.provider ?? '-'],
      ['model', status.model ?? '-'],
      ['stages', status.stages.join(', ') || '-'],
      ['tenant', status.tenantId],
    ],
    style,
  );

export const renderReadiness: TextRenderer<Readiness> = (readiness, style) => {
  const head = fields(
    [
      ['tenant', `${readiness.tenant.slug} (${readiness.tenant.status})`],
      ['plan', readiness.plan],
      ['ready', readiness.ready ? 'yes' : 'no'],
    ],
    style,
  );
  if (!readiness.workflows.length) return `${head}\nNo workflows configured.`;
  return `${head}\n\n${table(['WORKFLOW', 'STATUS', 'REASON'], readiness.workflows.map((w) => [w.workflowKey, w.status, w.reason]), style)}`;
};

export const renderRequest: TextRenderer<RuntimeRequest> = (request, style) =>
  fields(
    [
      ['id', request.id],
      ['workflow', request.workflowKey],
      ['display name', request.displayName],
      ['state', request.state],
      ['reason', request.reason || '-'],
      ['created', request.createdAt],
    ],
    style,
  );
