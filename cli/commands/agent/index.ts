import { Command } from '@commander-js/extra-typings';
import { command as refresh } from './refresh.ts';

export const command = new Command('agent').description("The project's agent assets: instructions for coding assistants working in the app").addCommand(refresh);
