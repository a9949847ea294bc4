import { batchCommand } from './_batch.ts';

export const command = batchCommand('delete');
