import { Command } from '@commander-js/extra-typings';
import { command as del } from './delete.ts';
import { command as get } from './get.ts';
import { command as upload } from './upload.ts';

export const command = new Command('file').description("A resource's file properties: upload, download, delete").addCommand(upload).addCommand(get).addCommand(del);
