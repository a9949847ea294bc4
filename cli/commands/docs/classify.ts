import { uploadCommand } from './_upload.ts';

export const command = uploadCommand(
  'classify',
  'classification',
  'Upload a document and classify it (processing_mode=classification), answering with its category; it is kept, not indexed (svc docs index <id> indexes it)',
  'POST /v4/data/documents/classify',
);
