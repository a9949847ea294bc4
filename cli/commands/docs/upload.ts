import { uploadCommand } from './_upload.ts';

export const command = uploadCommand(
  'upload',
  'full',
  'Upload a document to the tenant (processing_mode=full): it is classified and indexed for retrieval by a job; follow it with svc docs index <id> --wait or read its record',
  'POST /v4/data/documents/upload',
);
