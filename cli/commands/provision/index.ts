import { Command } from '@commander-js/extra-typings';
import { command as idp } from './idp.ts';
import { command as storage } from './storage.ts';

export const command = new Command('provision')
  .description("Provision what a tenant and its app need: the app's identity-provider registration, storage")
  .addCommand(idp)
  .addCommand(storage);
