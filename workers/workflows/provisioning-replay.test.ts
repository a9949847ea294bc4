import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { replayHistory } from '../worker.ts';

/**
 * Histories recorded by each released version of the provisioning workflows (every step queued on
 * the server, storage in a child workflow) and by today's (every step a local activity, storage
 * inline; storage from the routes queued). Runs in flight when the worker is upgraded continue from
 * such histories, so today's code must replay each command for command (the `patched` markers
 * choose the path a history took). An interim version that never landed (local steps with a
 * storage child) is not kept: its histories and today's carry the same marker.
 */
const RECORDED = [
  { file: 'provision-tenant.queued-steps.json', what: 'a tenant provisioned with a storage child', queued: 3 },
  { file: 'provision-storage.queued-steps.json', what: 'storage provisioned for every backend', queued: 5 },
  { file: 'provision-storage-failed.queued-steps.json', what: 'storage provisioning that failed and recorded why', queued: 5 },
  { file: 'provision-tenant.local-steps.json', what: 'a tenant and its storage provisioned in one workflow task', queued: 0 },
  { file: 'provision-tenant-failed.local-steps.json', what: 'a tenant whose storage failed, both failures recorded', queued: 0 },
  { file: 'provision-storage-from-route.local-steps.json', what: 'storage provisioned from the storage routes, queued', queued: 5 },
];

/** A history as `temporal workflow show --output json` writes it (the worker converts it). */
interface RecordedHistory {
  events: Array<{ eventType: string; activityTaskScheduledEventAttributes?: { activityType: { name: string } } }>;
}

async function recorded(file: string): Promise<RecordedHistory> {
  return JSON.parse(await readFile(new URL(`./histories/${file}`, import.meta.url), 'utf8')) as RecordedHistory;
}

describe('provisioning workflows replay the histories of every earlier version', () => {
  it.each(RECORDED)('replays $what ($file)', async ({ file, queued }) => {
    const history = await recorded(file);
    expect(history.events.filter((e) => e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED')).toHaveLength(queued);
    await expect(replayHistory(history)).resolves.toBeUndefined();
  });

  it("detects a history that today's code does not reproduce", async () => {
    const history = await recorded('provision-tenant.queued-steps.json');
    const scheduled = history.events.find((e) => e.activityTaskScheduledEventAttributes)!;
    scheduled.activityTaskScheduledEventAttributes!.activityType.name = 'activateTenant';
    await expect(replayHistory(history)).rejects.toThrow(/nondetermin/i);
  });
});
