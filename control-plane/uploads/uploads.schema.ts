import { z } from 'zod';

/** The v3 upload limit (seed 000: "Maximum file size 100 MB"). */
export const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;

/** A streamed body written to the tenant's blob area: where, how large, its SHA-256, and what the caller said it is. */
export const UploadSchema = z.object({
  key: z.string(),
  size: z.number().int(),
  sha256: z.string(),
  filename: z.string(),
  contentType: z.string(),
});
export type Upload = z.infer<typeof UploadSchema>;
