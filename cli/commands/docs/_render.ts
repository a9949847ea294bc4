import { table, type TextRenderer } from '../../output.ts';
import type { DocumentRecord } from '../../services/documents.service.ts';

/** The documents of an upload: id, file, status, category and the job that processes it. */
export const renderDocuments: TextRenderer<{ data: DocumentRecord[] }> = (answer, style) =>
  table(
    ['ID', 'FILE', 'STATUS', 'CATEGORY', 'JOB'],
    answer.data.map((d) => [
      d.id,
      d.filename,
      d.status,
      d.classification ? `${d.classification.category} (${Math.round(d.classification.confidence * 100)}%)` : '-',
      d.jobId ?? '-',
    ]),
    style,
  );

