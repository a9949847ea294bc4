// A thread documents are read on, one at a time (see createReaderPool in extractor.ts). Plain
// JavaScript, so that it starts the same under Node (which loads the TypeScript through tsx) and
// under Bun (which reads it).
import { parentPort } from 'node:worker_threads';

const reader = typeof Bun === 'undefined' ? await (await import('tsx/esm/api')).tsImport('./read-document.ts', import.meta.url) : await import('./read-document.ts');
parentPort.on('message', (job) => reader.serveReader(parentPort, job));
