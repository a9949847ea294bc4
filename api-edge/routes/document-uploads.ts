import { z } from 'zod';
import {
  DocumentTypeSchema,
  FileTooLargeError,
  MAX_TAG_LENGTH,
  MAX_TAGS,
  MAX_UPLOAD_BYTES,
  StorageQuotaError,
  untrusted,
  ValidationError,
  type CallContext,
  type ControlPlane,
  type Untrusted,
} from '../../control-plane/contracts.ts';
import { FORM_OVERHEAD_BYTES, isMultipartForm, MAX_FIELD_BYTES, readMultipartForm } from '../plugins/multipart.ts';

const flag = z.enum(['true', 'false']).optional();

/** The text fields of a document upload form, as text (v3's form; v4's takes some of them). */
export const UploadFormSchema = z.object({
  type: DocumentTypeSchema.optional().describe('The document type; default `general`'),
  tags: z.string().max(MAX_TAGS * (MAX_TAG_LENGTH + 1)).optional().describe(`Comma-separated tags (at most ${MAX_TAGS})`),
  autoClassify: flag.describe('Classify it (a processing job)'),
  autoIndex: flag.describe('Index it for search (a processing job)'),
  metadata: z.string().max(MAX_FIELD_BYTES).optional().describe('A JSON object, as text'),
});

export interface DocumentForm {
  /** The file part's name: `file` (v3, one) or `files` (v4, several). */
  fileField: string;
  maxFiles: number;
  textFields: readonly string[];
  /**
   * The call of the request; `fields` are the text fields read so far, for a tenant named in the
   * form (v4 `tenant_id`). Called once the tenant must be known: before the first file, or at the end.
   */
  callOf(fields: ReadonlyMap<string, string>): CallContext;
  /** Whether the tenant is known before the body is read (v3's header, v4's query string): the declared length is then judged by the tenant's own limit. */
  tenantKnownUpfront: boolean;
  /** Fields that, when given, must come before the first file (the tenant the files are stored for). */
  beforeFiles?: readonly string[];
  /** The answer's headers: a refused upload closes its connection, so that the rest of the body is not read. */
  headers: Record<string, string | number>;
}

export interface ReceivedDocuments {
  call: CallContext;
  fields: Map<string, string>;
  uploadIds: string[];
}

/**
 * Receives a document upload form: the caller's right to upload is checked first (403 before any
 * byte is read), a declared length over the limit or past the tenant's storage quota is refused
 * unread (413), then each file is
 * streamed to the control plane (`documents.stage`), which judges and stores it. Should anything
 * fail, the files staged so far are discarded.
 */
export async function receiveDocuments(cp: ControlPlane, request: Request, form: DocumentForm): Promise<ReceivedDocuments> {
  let call: CallContext | undefined;
  let maxFileBytes = MAX_UPLOAD_BYTES;
  let storage: { quotaBytes: number; usedBytes: number } | undefined;
  const authorize = async (fields: ReadonlyMap<string, string>) => {
    if (call) return call;
    const candidate = form.callOf(fields);
    ({ maxFileBytes, storage } = await cp.query(candidate, 'documents', 'uploadPolicy', {}));
    return (call = candidate);
  };
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  try {
    if (form.tenantKnownUpfront || !isMultipartForm(request)) await authorize(new Map());
    if (declared > maxFileBytes * form.maxFiles + FORM_OVERHEAD_BYTES) throw new FileTooLargeError(maxFileBytes);
    // Files that cannot fit in what is left of the tenant's storage quota, whatever the form's own parts take.
    if (storage && declared > storage.quotaBytes - storage.usedBytes + FORM_OVERHEAD_BYTES) throw new StorageQuotaError(storage.quotaBytes, storage.usedBytes);
  } catch (error) {
    // A small body is read to its end, so that a client still sending it reads the answer; a larger one is left unread, its connection closed.
    if (declared <= FORM_OVERHEAD_BYTES) await request.arrayBuffer().catch(() => undefined);
    else form.headers.connection = 'close';
    throw error;
  }

  const uploadIds: string[] = [];
  let atFirstFile: ReadonlyMap<string, string> | undefined;
  try {
    const { fields, files } = await readMultipartForm(request, {
      fileFields: [form.fileField],
      textFields: form.textFields,
      maxFiles: form.maxFiles,
      maxFileBytes: MAX_UPLOAD_BYTES,
      onFile: async (file, fieldsSoFar) => {
        atFirstFile ??= fieldsSoFar;
        const caller = await authorize(fieldsSoFar);
        const staged = await cp.upload(caller, 'documents', 'stage', { stream: file.stream, meta: untrusted({ filename: file.filename, contentType: file.contentType }) });
        uploadIds.push(staged.uploadId);
      },
    });
    const caller = await authorize(fields);
    // The whole form known: a tenant named twice (query string and form) is refused here.
    form.callOf(fields);
    if (files === 0) throw ValidationError.field(form.fileField, 'is required');
    for (const name of form.beforeFiles ?? []) {
      if (fields.has(name) && !atFirstFile?.has(name)) throw ValidationError.field(name, `must come before the files (${form.fileField}) in the form`);
    }
    return { call: caller, fields, uploadIds };
  } catch (error) {
    form.headers.connection = 'close';
    await discardDocuments(cp, call, uploadIds);
    throw error;
  }
}

/** Removes staged uploads that did not become documents (best effort: an upload left staged holds no record). */
export async function discardDocuments(cp: ControlPlane, call: CallContext | undefined, uploadIds: readonly string[]): Promise<void> {
  if (!call) return;
  for (const uploadId of uploadIds) await cp.mutation(call, 'documents', 'discard', { uploadId }).catch(() => undefined);
}

/** A form's `true`/`false` as a boolean; any other text is passed on for the procedure to refuse. */
export function formFlag(fields: ReadonlyMap<string, string>, name: string): boolean | Untrusted | undefined {
  const value = fields.get(name);
  if (value === undefined) return undefined;
  return value === 'true' ? true : value === 'false' ? false : untrusted(value);
}

/** Comma-separated tags as a list (blank entries dropped). */
export function formTags(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',').map((tag) => tag.trim()).filter(Boolean);
}

/** A form field holding JSON text (`metadata`). */
export function formJson(fields: ReadonlyMap<string, string>, name: string): Untrusted | undefined {
  const value = fields.get(name);
  if (value === undefined) return undefined;
  try {
    return untrusted(JSON.parse(value) as unknown);
  } catch {
    throw ValidationError.field(name, 'must be JSON text');
  }
}

/** The document fields every upload form takes beside its files and tenant. */
export function documentFields(fields: ReadonlyMap<string, string>) {
  return { type: fields.get('type'), tags: formTags(fields.get('tags')), metadata: formJson(fields, 'metadata') };
}
