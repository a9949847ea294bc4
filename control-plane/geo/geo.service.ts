import { randomUUID } from 'node:crypto';
import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import type { Db } from '../db/client.ts';
import { ConflictError, ForbiddenError, NotFoundError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { GAZETTEER_ATTRIBUTION, sharedGazetteer, type Gazetteer } from './gazetteer.ts';
import { boundsOf, boxesOfBbox, type Geometry } from './geometry.ts';
import { datasetOf, pageInBoxes, pageNear, WHOLE_WORLD } from './geo-pages.ts';
import {
  countDatasets,
  deleteDataset,
  deleteFeaturesExcept,
  findDataset,
  insertDataset,
  listDatasets,
  refreshDataset,
  updateDataset,
  upsertFeatures,
  type DatasetRow,
  type FeatureRow,
} from './geo.repo.ts';
import {
  MAX_DATASETS_PER_TENANT,
  MAX_FEATURES_PER_DATASET,
  type CreateDatasetInput,
  type Dataset,
  type Feature,
  type FeaturePage,
  type GeoReport,
  type GeoReportInput,
  type IngestInput,
  type QueryFeaturesInput,
  type ResolveLocationInput,
  type ReverseInput,
  type UpdateDatasetInput,
} from './geo.schema.ts';
import { reportOf } from './geo-report.ts';

export type GeoService = ReturnType<typeof createGeoService>;

const CAPABILITY = 'geo';
/** Features a report reads per page. */
const REPORT_PAGE = 1000;

/**
 * Geo: place names and coordinates from the gazetteer, and each tenant's datasets of GeoJSON
 * features, queried by box and by radius. Every operation needs the tenant's `geo` capability;
 * its limits `maxDatasets` and `maxFeaturesPerDataset` apply when the plan or an override sets them.
 */
export function createGeoService(deps: { db: Db; capabilities: CapabilitiesService; gazetteer?: () => Gazetteer }) {
  const { db, capabilities } = deps;
  const gazetteer = deps.gazetteer ?? sharedGazetteer;
  const withoutSpan = ({ maxLatSpan: _, ...dataset }: DatasetRow): Dataset => dataset;

  return {
    /** Places whose name matches the query, best first (exact, prefix, word, then spelling mistakes; then population). */
    async resolveLocation(actor: Actor, input: ResolveLocationInput) {
      await capabilities.require(actor.tenantId, CAPABILITY);
      const { interpreted, places } = gazetteer().resolve({ text: input.query, limit: input.limit, country: input.country });
      return { interpreted, data: places, attribution: GAZETTEER_ATTRIBUTION };
    },

    /** The places nearest to a position, nearest first. */
    async reverse(actor: Actor, input: ReverseInput) {
      await capabilities.require(actor.tenantId, CAPABILITY);
      return { data: gazetteer().nearest(input), attribution: GAZETTEER_ATTRIBUTION };
    },

    async listDatasets(actor: Actor): Promise<{ data: Dataset[] }> {
      await capabilities.require(actor.tenantId, CAPABILITY);
      return { data: await db.inTenant(actor.tenantId, (tx) => listDatasets(tx)) };
    },

    /** Creates an empty dataset; 409 when the tenant has one of that key, 403 past the tenant's number of datasets. */
    async createDataset(actor: Actor, input: CreateDatasetInput): Promise<Dataset> {
      const { limits } = await capabilities.require(actor.tenantId, CAPABILITY);
      const allowed = limits.maxDatasets ?? MAX_DATASETS_PER_TENANT;
      return db.inTenant(actor.tenantId, async (tx) => {
        // One creation at a time per tenant, so that two cannot both pass the count.
        await tx`select pg_advisory_xact_lock(hashtext('geo_datasets'), hashtext(${actor.tenantId}))`;
        const held = await countDatasets(tx);
        if (held >= allowed) throw new ForbiddenError(`capability ${CAPABILITY} allows ${allowed} datasets per tenant, and this tenant holds ${held}`);
        if (await findDataset(tx, input.key)) throw new ConflictError(`dataset "${input.key}" already exists`, { field: 'key' });
        return insertDataset(tx, input, actor.userId);
      });
    },

    async getDataset(actor: Actor, key: string): Promise<Dataset> {
      await capabilities.require(actor.tenantId, CAPABILITY);
      return withoutSpan(await db.inTenant(actor.tenantId, (tx) => datasetOf(tx, key)));
    },

    /** Changes a dataset's name or description (a merge patch); its features stay as they are. */
    async updateDataset(actor: Actor, input: UpdateDatasetInput): Promise<Dataset> {
      await capabilities.require(actor.tenantId, CAPABILITY);
      const { dataset: key, ...fields } = input;
      const updated = await db.inTenant(actor.tenantId, (tx) => updateDataset(tx, key, fields));
      if (!updated) throw new NotFoundError(`dataset "${key}"`);
      return updated;
    },

    /** Deletes a dataset and every feature of it. */
    async deleteDataset(actor: Actor, key: string): Promise<void> {
      await capabilities.require(actor.tenantId, CAPABILITY);
      const deleted = await db.inTenant(actor.tenantId, (tx) => deleteDataset(tx, key));
      if (!deleted) throw new NotFoundError(`dataset "${key}"`);
    },

    /**
     * Adds a FeatureCollection's features to a dataset, each replacing the feature of its id
     * (features without an id get a new one); with `replace`, the features the collection does not
     * name are removed too. All or nothing; ingests into one dataset run one at a time.
     */
    async ingest(actor: Actor, input: IngestInput) {
      const { limits } = await capabilities.require(actor.tenantId, CAPABILITY);
      const allowed = limits.maxFeaturesPerDataset ?? MAX_FEATURES_PER_DATASET;
      const rows: FeatureRow[] = input.features.map((feature) => ({
        fid: feature.id === undefined ? randomUUID() : String(feature.id),
        fidIsNumber: typeof feature.id === 'number',
        geometry: feature.geometry,
        properties: feature.properties ?? null,
        bounds: boundsOf(feature.geometry as Geometry),
      }));
      return db.inTenant(actor.tenantId, async (tx) => {
        const dataset = await datasetOf(tx, input.dataset, true);
        const { created, updated } = await upsertFeatures(tx, dataset.id, rows);
        const removed = input.replace ? await deleteFeaturesExcept(tx, dataset.id, rows.map((row) => row.fid)) : 0;
        const refreshed = await refreshDataset(tx, dataset.id);
        if (refreshed.featureCount > allowed) {
          throw new ForbiddenError(`capability ${CAPABILITY} allows ${allowed} features per dataset; dataset "${input.dataset}" would hold ${refreshed.featureCount}`);
        }
        return { dataset: refreshed, created, updated, removed };
      });
    },

    /** A page of a dataset's features: all, those meeting a box, or those within a radius (nearest first). */
    async queryFeatures(actor: Actor, input: QueryFeaturesInput): Promise<FeaturePage> {
      await capabilities.require(actor.tenantId, CAPABILITY);
      return db.inTenant(actor.tenantId, async (tx) => {
        const dataset = await datasetOf(tx, input.dataset);
        if (input.lat !== undefined && input.lon !== undefined && input.radius !== undefined) return pageNear(tx, dataset, { ...input, lat: input.lat, lon: input.lon, radius: input.radius });
        return pageInBoxes(tx, dataset, input.bbox ? boxesOfBbox(input.bbox) : [WHOLE_WORLD], input);
      });
    },

    /**
     * A report of a dataset's features in an area, counted (and grouped by a property) over every
     * page of the query the area names, in one snapshot of the dataset.
     */
    async report(actor: Actor, input: GeoReportInput): Promise<GeoReport> {
      await capabilities.require(actor.tenantId, CAPABILITY);
      return db.inTenant(actor.tenantId, async (tx) => {
        const dataset = await datasetOf(tx, input.dataset);
        const { lat, lon, radius } = input;
        const near = lat !== undefined && lon !== undefined && radius !== undefined;
        const pages = async function* (): AsyncGenerator<Feature[]> {
          let cursor: string | undefined;
          do {
            const query = { dataset: input.dataset, limit: REPORT_PAGE, cursor };
            const page = near ? await pageNear(tx, dataset, { ...query, lat, lon, radius }) : await pageInBoxes(tx, dataset, input.bbox ? boxesOfBbox(input.bbox) : [WHOLE_WORLD], { ...query, bbox: input.bbox });
            yield page.features;
            cursor = page.nextCursor ?? undefined;
          } while (cursor);
        };
        return reportOf(input, pages());
      });
    },
  };
}
