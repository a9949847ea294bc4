import { Command } from '@commander-js/extra-typings';
import { command as storage } from './storage.ts';

export const command = new Command('provision').description('Provision what a tenant needs: storage').addCommand(storage);
