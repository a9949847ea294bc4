import type { Db, Tx } from '../db/client.ts';
import { ForbiddenError, NotFoundError, ValidationError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { emptyResealReport, resealed, type ResealReport } from '../secrets/reseal.ts';
import { sealedUnderPattern, type SecretBox } from '../secrets/secret-box.ts';
import { countEntries, deleteEntry, insertAudit, listAudit, listEntries, listSets, resealEntry, sealedNotLike, upsertEntry, type AuditRecord, type SetRef, type StoredEntry } from './config-store.repo.ts';
import {
  MAX_ENTRIES_PER_SET,
  type ConfigAuditPage,
  type ConfigEntry,
  type ConfigEntryRef,
  type ConfigSet,
  type ConfigSetSummary,
  type ConfigWriteOutcome,
  type GetConfigInput,
  type ListConfigAuditInput,
  type PutConfigEntryInput,
  type WriteConfigInput,
} from './config-store.schema.ts';

/** The permission that writes entries and reads secrets' values: the tenant administrator's. */
export const CONFIG_ADMIN_PERMISSION = 'tenants.manage';

/** What a sealed value is bound to: its tenant, set and key, so that a value copied onto another entry does not open there. */
const sealContext = (tenantId: string, set: SetRef, key: string) => `config_entries.value:${tenantId}:${set.label}:${set.environment}:${key}`;

type Change = ConfigWriteOutcome['changes'][number];

export type ConfigStoreService = ReturnType<typeof createConfigStoreService>;

/**
 * The configuration store of a tenant's apps: per app label and environment, key/value entries,
 * some of them secrets. Secrets are sealed with the operator's key before they are stored and are
 * returned only to tenant administrators who ask for them; every change, and every read of
 * secrets' values, is audited without the value. A write that changes nothing is `unchanged` and
 * leaves no audit event. Writes are all or nothing.
 */
export function createConfigStoreService(deps: {
  db: Db;
  /** Seals secrets with the operator's key; a process without one refuses to store or reveal a secret. */
  secrets?: SecretBox;
}) {
  const { db } = deps;

  function box(): SecretBox {
    if (!deps.secrets) throw new Error('configuration secrets need the operator key (SECRETS_KEY), which this process was not given');
    return deps.secrets;
  }

  const plainOf = (tenantId: string, set: SetRef, stored: StoredEntry) => (stored.secret ? box().open(stored.sealedValue!, sealContext(tenantId, set, stored.key)) : stored.value!);

  const shown = (tenantId: string, set: SetRef, stored: StoredEntry, reveal: boolean): ConfigEntry => ({
    key: stored.key,
    value: stored.secret && !reveal ? null : plainOf(tenantId, set, stored),
    secret: stored.secret,
    version: stored.version,
    created_at: stored.created_at,
    updated_at: stored.updated_at,
    updated_by: stored.updated_by,
  });

  /**
   * Sets one key in the caller's transaction: unchanged when the value and the secret flag are
   * those stored; `secret` omitted keeps the stored flag (false for a new key).
   */
  async function setEntry(tx: Tx, actor: Actor, set: SetRef, existing: StoredEntry | undefined, write: { key: string; value: string; secret?: boolean }) {
    const secret = write.secret ?? existing?.secret ?? false;
    if (existing && existing.secret === secret && plainOf(actor.tenantId, set, existing) === write.value) {
      return { stored: existing, change: { key: write.key, action: 'unchanged', secret, version: existing.version } satisfies Change };
    }
    const stored = await upsertEntry(
      tx,
      set,
      { key: write.key, secret, value: secret ? null : write.value, sealedValue: secret ? box().seal(write.value, sealContext(actor.tenantId, set, write.key)) : null },
      actor.userId,
    );
    const action = stored.version === 1 ? 'created' : 'updated';
    return { stored, change: { key: write.key, action, secret, version: stored.version } satisfies Change };
  }

  async function assertWithinLimit(tx: Tx, set: SetRef): Promise<void> {
    if ((await countEntries(tx, set)) > MAX_ENTRIES_PER_SET) {
      throw ValidationError.field('entries', `would make ${set.label}/${set.environment} hold more than ${MAX_ENTRIES_PER_SET} entries`);
    }
  }

  const audited = (set: SetRef, changes: Change[]): AuditRecord[] =>
    changes.filter((c) => c.action !== 'unchanged').map((c) => ({ label: set.label, environment: set.environment, key: c.key, action: c.action as AuditRecord['action'], secret: c.secret }));

  return {
    /**
     * Seals again, under the current operator key, the secrets sealed under a previous key
     * (`SECRETS_KEY_PREVIOUS`); run when the control plane starts. Idempotent, and safe beside
     * other instances doing the same.
     */
    async resealStoredSecrets(): Promise<ResealReport> {
      const report = emptyResealReport();
      for (const entry of await db.system((tx) => sealedNotLike(tx, sealedUnderPattern(box().keyId)))) {
        const set = { label: entry.label, environment: entry.environment };
        const sealed = resealed(box(), entry.sealedValue, sealContext(entry.tenantId, set, entry.key), report);
        if (sealed === undefined) continue;
        await db.system((tx) => resealEntry(tx, entry, sealed));
        report.resealed += 1;
      }
      return report;
    },

    /** The tenant's sets: each label and environment with its counts of entries and secrets. */
    listSets: (actor: Actor): Promise<ConfigSetSummary[]> => db.inTenant(actor.tenantId, (tx) => listSets(tx)),

    /** One set's entries by key; secrets' values only with `include_secrets`, for tenant administrators, audited. */
    async get(actor: Actor, input: GetConfigInput): Promise<ConfigSet> {
      if (input.include_secrets && !actor.permissions.has(CONFIG_ADMIN_PERMISSION)) {
        throw new ForbiddenError(`reading secrets' values needs permission ${CONFIG_ADMIN_PERMISSION}`);
      }
      const set = { label: input.label, environment: input.environment };
      const entries = await db.inTenant(actor.tenantId, async (tx) => {
        const stored = await listEntries(tx, set);
        if (input.include_secrets && stored.some((e) => e.secret)) {
          await insertAudit(tx, actor, [{ ...set, key: null, action: 'secrets_read', secret: true }]);
        }
        return stored;
      });
      return {
        tenant_id: actor.tenantId,
        ...set,
        secrets_included: input.include_secrets,
        data: entries.map((e) => shown(actor.tenantId, set, e, input.include_secrets)),
      };
    },

    /** Sets one key; the entry comes back without a secret's value. */
    async put(actor: Actor, input: PutConfigEntryInput): Promise<{ entry: ConfigEntry; action: Change['action'] }> {
      const set = { label: input.label, environment: input.environment };
      return db.inTenant(actor.tenantId, async (tx) => {
        const existing = (await listEntries(tx, set, { forUpdate: true })).find((e) => e.key === input.key);
        const { stored, change } = await setEntry(tx, actor, set, existing, input);
        if (change.action === 'created') await assertWithinLimit(tx, set);
        await insertAudit(tx, actor, audited(set, [change]));
        return { entry: shown(actor.tenantId, set, stored, false), action: change.action };
      });
    },

    /** Sets and removes keys of one set together, all or none; removing a key that is not there is refused. */
    async write(actor: Actor, input: WriteConfigInput): Promise<ConfigWriteOutcome> {
      const set = { label: input.label, environment: input.environment };
      const changes = await db.inTenant(actor.tenantId, async (tx) => {
        const existing = new Map((await listEntries(tx, set, { forUpdate: true })).map((e) => [e.key, e]));
        const missing = input.remove.filter((key) => !existing.has(key));
        if (missing.length) throw new NotFoundError(`configuration key ${missing.join(', ')} of ${set.label}/${set.environment}`);
        const done: Change[] = [];
        for (const write of input.entries) done.push((await setEntry(tx, actor, set, existing.get(write.key), write)).change);
        for (const key of input.remove) {
          const removed = await deleteEntry(tx, set, key);
          done.push({ key, action: 'deleted', secret: removed!.secret, version: null });
        }
        if (done.some((c) => c.action === 'created')) await assertWithinLimit(tx, set);
        await insertAudit(tx, actor, audited(set, done));
        return done;
      });
      return { tenant_id: actor.tenantId, ...set, changes };
    },

    async remove(actor: Actor, input: ConfigEntryRef): Promise<void> {
      const set = { label: input.label, environment: input.environment };
      await db.inTenant(actor.tenantId, async (tx) => {
        const removed = await deleteEntry(tx, set, input.key);
        if (!removed) throw new NotFoundError(`configuration key ${input.key} of ${set.label}/${set.environment}`);
        await insertAudit(tx, actor, [{ ...set, key: input.key, action: 'deleted', secret: removed.secret }]);
      });
    },

    /** The audit of the tenant's configuration, newest first. */
    async audit(actor: Actor, input: ListConfigAuditInput): Promise<ConfigAuditPage> {
      const { rows, total } = await db.inTenant(actor.tenantId, (tx) => listAudit(tx, input));
      return { data: rows, total, limit: input.limit, offset: input.offset };
    },
  };
}
