import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { CliError } from '../../errors.ts';
import { renderRecord } from '../../output.ts';

/** How long `--wait` waits for the job. */
const WAIT_MS = 10 * 60_000;

export const command = withMeta(
  new Command('index')
    .description(
      "Index a document for retrieval: reads its record (E202 when the tenant has none such), then submits an indexing job; --wait follows the job until it ends (at most 10 minutes) and fails with E203 when it failed",
    )
    .argument('<id>', 'document id')
    .addOption(tenantIdOption())
    .option('--wait', 'wait until the job has completed or failed')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (id, options, cmd) => {
      const { createDocumentsService } = await import('../../services/documents.service.ts');
      const ctx = contextOf(cmd);
      const tenantId = await ctx.tenantId(options.tenantId);
      const documents = createDocumentsService(await ctx.api());
      const record = await ctx.out.spin('Reading the document', () => documents.record(tenantId, id));
      let job = await ctx.out.spin(`Submitting ${record.filename} for indexing`, () => documents.index(tenantId, record.id));
      if (options.wait) {
        const waited = await ctx.out.spin(`Indexing ${record.filename}`, () => documents.waitForJob(tenantId, job.jobId, { timeoutMs: WAIT_MS }), { elapsed: true });
        job = waited.job;
        if (!waited.ended) ctx.out.warn(`the job is still ${job.state} after ${WAIT_MS / 60_000} minutes; it goes on (svc publicapi get /v4/data/documents/rag-index/${job.jobId} --tenant-id ${tenantId})`);
        if (job.state === 'failed' || job.state === 'cancelled') {
          throw new CliError('E203', { details: `indexing job ${job.jobId} of ${record.filename} ${job.state}${job.error ? `: ${job.error}` : ''}` });
        }
      }
      ctx.out.data(job, renderRecord);
    }),
  { calls: ['GET /v4/data/documents/records/{documentId}', 'POST /v4/data/documents/rag-index', 'GET /v4/data/documents/rag-index/{jobId}'] },
);
