import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from '../_top-level.ts';
import { command as refresh } from './refresh.ts';

export const command = new Command('agent').description(TOP_LEVEL.agent.description).addCommand(refresh);
