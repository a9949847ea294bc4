import { boundsOf } from './geometry.ts';
import { MAX_REPORT_GROUPS, type Feature, type GeoReport, type GeoReportInput } from './geo.schema.ts';

/**
 * Counts the features of a report's pages: their number, their extent, and (with `group_by`) how
 * many hold each value of the property, most first then by value, the values past the first 100
 * counted together. A value is grouped by its JSON text, so that `1` and `"1"` stay apart.
 */
export async function reportOf(input: GeoReportInput, pages: AsyncIterable<Feature[]>): Promise<GeoReport> {
  let featureCount = 0;
  const extent = { west: Infinity, south: Infinity, east: -Infinity, north: -Infinity };
  const groups = new Map<string, number>();
  for await (const features of pages) {
    for (const feature of features) {
      featureCount += 1;
      const box = boundsOf(feature.geometry);
      extent.west = Math.min(extent.west, box.west);
      extent.south = Math.min(extent.south, box.south);
      extent.east = Math.max(extent.east, box.east);
      extent.north = Math.max(extent.north, box.north);
      if (input.group_by !== undefined) {
        const properties = feature.properties ?? {};
        const value = JSON.stringify(Object.hasOwn(properties, input.group_by) ? (properties[input.group_by] ?? null) : null);
        groups.set(value, (groups.get(value) ?? 0) + 1);
      }
    }
  }
  const { bbox, lat, lon, radius } = input;
  const ranked = [...groups].map(([value, count]) => ({ value, count })).sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  const listed = ranked.slice(0, MAX_REPORT_GROUPS);
  return {
    dataset: input.dataset,
    area: bbox ? { bbox } : radius !== undefined ? { lat, lon, radius } : {},
    featureCount,
    bbox: featureCount ? [extent.west, extent.south, extent.east, extent.north] : null,
    ...(input.group_by === undefined ? {} : { groups: listed, otherCount: featureCount - listed.reduce((sum, group) => sum + group.count, 0) }),
    generatedAt: new Date().toISOString(),
  };
}
