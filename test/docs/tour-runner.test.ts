import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tourBlocks } from './markdown-tour.ts';
import { disagreement, runBlock, type TourSession } from './tour-runner.ts';

/**
 * The tour runner itself, on a guide written here and a small local server (201 for a POST, 200
 * for a GET, 404 elsewhere): a block that does what its comment says passes, one that does not is
 * reported at its line with the call and the answer, and variables carry over between blocks.
 */
const GUIDE = `# A guide

<!-- expect: 201 200; prints "id":"t-1" -->
\`\`\`sh
ID=$(curl -d '{}' http://localhost:8080/things | jq -r .id)
curl http://localhost:8080/things/$ID
\`\`\`

<!-- expect: 200 -->
\`\`\`sh
curl http://localhost:8080/nothing/$ID
\`\`\`

<!-- expect: success -->
\`\`\`sh
false
\`\`\`

<!-- expect: success; prints hello -->
\`\`\`sh
echo goodbye
\`\`\`

<!-- not run: shown only -->
\`\`\`sh
rm -rf /
\`\`\`

\`\`\`sh
echo unmarked
\`\`\`
`;

describe('the tour runner', () => {
  let server: Server;
  let work: string;
  let session: TourSession;

  beforeAll(async () => {
    server = createServer((request, response) => {
      const status = request.method === 'POST' ? 201 : request.url === '/things/t-1' ? 200 : 404;
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(status === 404 ? { error: 'no such thing' } : { id: 't-1' }));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    work = mkdtempSync(join(tmpdir(), 'svc-tour-runner-'));
    writeFileSync(join(work, 'guide.md'), GUIDE);
    const { port } = server.address() as { port: number };
    session = { origin: `http://127.0.0.1:${port}`, work, env: { PATH: process.env.PATH, HOME: work } };
  });
  afterAll(() => {
    server.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('reads each shell block with its line and expectation', () => {
    const blocks = tourBlocks(join(work, 'guide.md'));
    expect(blocks.map((b) => [b.line, b.expect])).toEqual([
      [4, { run: true, statuses: [201, 200], prints: '"id":"t-1"' }],
      [10, { run: true, statuses: [200] }],
      [15, { run: true, statuses: [] }],
      [20, { run: true, statuses: [], prints: 'hello' }],
      [25, { run: false, reason: 'shown only' }],
      [29, undefined],
    ]);
  });

  it('passes a block that does what its comment says, and names the line, call and answer of one that does not', async () => {
    const [first, second, third, fourth] = tourBlocks(join(work, 'guide.md'));
    expect(disagreement(first!, await runBlock(first!, 0, session))).toBeUndefined();
    // ID, set by the block before, is read here.
    const wrong = disagreement(second!, await runBlock(second!, 1, session));
    expect(wrong).toMatch(new RegExp(`^${join(work, 'guide.md')}:10: the block ran; curl #1 \\(http://127\\.0\\.0\\.1:\\d+/nothing/t-1\\) answered 404, expected 200: \\{"error":"no such thing"\\}`));
    expect(disagreement(third!, await runBlock(third!, 2, session))).toMatch(/guide\.md:15: the block failed \(exit code 1\); answered nothing, expected no curl call/);
    expect(disagreement(fourth!, await runBlock(fourth!, 3, session))).toMatch(/guide\.md:20: the block ran, but its output lacks "hello"/);
  });
});
