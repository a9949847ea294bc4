import { readFileSync } from 'node:fs';
import { request } from 'node:https';

/** Requests the API server has served, per `VERB resource[/subresource]`: how many and their total seconds. */
export type RequestCounts = Map<string, { count: number; seconds: number }>;

function labelsOf(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

/** Scrapes `/metrics` of the API server: `apiserver_request_duration_seconds` count and sum per verb and resource. */
export function apiServerRequests(url: string, token: string, caFile: string): Promise<RequestCounts> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/metrics`, { ca: readFileSync(caFile), headers: { authorization: `Bearer ${token}` }, agent: false, timeout: 30_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('error', reject);
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`GET ${url}/metrics answered ${res.statusCode}`));
        const counts: RequestCounts = new Map();
        for (const line of body.split('\n')) {
          const match = /^apiserver_request_duration_seconds_(count|sum)\{([^}]*)\} (\S+)$/.exec(line);
          if (!match) continue;
          const labels = labelsOf(match[2]!);
          const key = `${labels.verb} ${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''}`;
          const entry = counts.get(key) ?? { count: 0, seconds: 0 };
          if (match[1] === 'count') entry.count += Number(match[3]);
          else entry.seconds += Number(match[3]);
          counts.set(key, entry);
        }
        resolve(counts);
      });
    });
    req.once('timeout', () => req.destroy(new Error(`GET ${url}/metrics timed out`)));
    req.once('error', reject);
    req.end();
  });
}

/** What was served between two scrapes, most frequent first; long-running WATCH requests left out. */
export function requestsBetween(before: RequestCounts, after: RequestCounts): Array<{ key: string; count: number; seconds: number }> {
  return [...after]
    .map(([key, end]) => ({ key, count: end.count - (before.get(key)?.count ?? 0), seconds: end.seconds - (before.get(key)?.seconds ?? 0) }))
    .filter((r) => r.count > 0 && !r.key.startsWith('WATCH'))
    .sort((a, b) => b.count - a.count);
}
