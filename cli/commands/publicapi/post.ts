import { methodCommand } from './_method.ts';

export const command = methodCommand('POST');
