import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from '../_top-level.ts';
import { command as check } from './check.ts';

export const command = new Command('template').description(TOP_LEVEL.template.description).addCommand(check);
