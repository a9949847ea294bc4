import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from '../_top-level.ts';
import { command as idp } from './idp.ts';
import { command as storage } from './storage.ts';

export const command = new Command('provision')
  .description(TOP_LEVEL.provision.description)
  .addCommand(idp)
  .addCommand(storage);
