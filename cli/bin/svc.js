#!/usr/bin/env node
// The `svc` executable: loads the TypeScript client through tsx's loader and runs it.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../main.ts');
process.exitCode = await main(process.argv.slice(2));
