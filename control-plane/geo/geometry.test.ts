import { describe, expect, it } from 'vitest';
import { boundsOf, boxesAround, boxesOfBbox, haversineMeters, meetsBox, metersToGeometry, type Geometry, type Position } from './geometry.ts';

const ring = (west: number, south: number, east: number, north: number): Position[] => [
  [west, south],
  [east, south],
  [east, north],
  [west, north],
  [west, south],
];
const square = (west: number, south: number, east: number, north: number): Geometry => ({ type: 'Polygon', coordinates: [ring(west, south, east, north)] });

describe('geometry', () => {
  it('measures great-circle distances (Paris to London about 343.5 km; a degree of latitude about 111.2 km)', () => {
    expect(haversineMeters(48.8566, 2.3522, 51.5074, -0.1278)).toBeGreaterThan(343_000);
    expect(haversineMeters(48.8566, 2.3522, 51.5074, -0.1278)).toBeLessThan(344_000);
    expect(haversineMeters(0, 0, 1, 0)).toBeCloseTo(111_195, -1);
    expect(haversineMeters(0, 179.5, 0, -179.5)).toBeCloseTo(111_195, -1);
  });

  it('bounds a geometry by its positions', () => {
    expect(boundsOf({ type: 'LineString', coordinates: [[1, 2], [-3, 4, 100], [5, -6]] })).toEqual({ west: -3, south: -6, east: 5, north: 4 });
    expect(boundsOf({ type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [10, 10] }, square(0, 0, 1, 1)] })).toEqual({ west: 0, south: 0, east: 10, north: 10 });
  });

  it('cuts a bbox whose west edge lies east of its east edge at the antimeridian (RFC 7946 5.2)', () => {
    expect(boxesOfBbox([170, -10, -170, 10])).toEqual([
      { west: 170, south: -10, east: 180, north: 10 },
      { west: -180, south: -10, east: -170, north: 10 },
    ]);
    expect(boxesOfBbox([-1, -2, 3, 4])).toEqual([{ west: -1, south: -2, east: 3, north: 4 }]);
  });

  it('boxes a radius: one box, two across the antimeridian, every longitude around a pole', () => {
    const [box] = boxesAround(0, 0, 111_195);
    expect(box!.north).toBeCloseTo(1, 3);
    expect(box!.east).toBeCloseTo(1, 3);
    const [near60] = boxesAround(60, 10, 111_195);
    // A degree of longitude at 60° is half as long: the box is twice as wide.
    expect(near60!.east - 10).toBeCloseTo(2, 1);
    expect(boxesAround(0, 179.9, 50_000)).toHaveLength(2);
    expect(boxesAround(89.9, 0, 50_000)).toEqual([{ west: -180, south: expect.closeTo(89.45, 2), east: 180, north: 90 }]);
  });

  it('tells whether a geometry meets a box, edges, crossings and holes included', () => {
    const box = { west: 0, south: 0, east: 10, north: 10 };
    expect(meetsBox({ type: 'Point', coordinates: [10, 5] }, box)).toBe(true);
    expect(meetsBox({ type: 'Point', coordinates: [10.1, 5] }, box)).toBe(false);
    // A line through the box with both ends outside.
    expect(meetsBox({ type: 'LineString', coordinates: [[-5, 5], [15, 5]] }, box)).toBe(true);
    // A line past the box's corner, whose own box overlaps it.
    expect(meetsBox({ type: 'LineString', coordinates: [[-5, 8], [2, 15]] }, box)).toBe(false);
    // A polygon holding the whole box, and one whose hole holds it.
    expect(meetsBox(square(-20, -20, 20, 20), box)).toBe(true);
    expect(meetsBox({ type: 'Polygon', coordinates: [ring(-20, -20, 20, 20), ring(-15, -15, 15, 15)] }, box)).toBe(false);
    expect(meetsBox({ type: 'MultiPolygon', coordinates: [[ring(30, 30, 40, 40)], [ring(5, 5, 6, 6)]] }, box)).toBe(true);
  });

  it('measures to the nearest part of a geometry: 0 inside a polygon, across an edge otherwise', () => {
    expect(metersToGeometry(0.5, 0.5, square(0, 0, 1, 1))).toBe(0);
    // One degree of longitude east of a polygon's east edge, on the equator.
    expect(metersToGeometry(0.5, 2, square(0, 0, 1, 1))).toBeCloseTo(111_195, -2);
    // The middle of a segment is nearer than either end.
    const line: Geometry = { type: 'LineString', coordinates: [[-1, 0], [1, 0]] };
    expect(metersToGeometry(0.1, 0, line)).toBeCloseTo(11_119.5, -1);
    // Past the segment's end, the end is the nearest point.
    expect(metersToGeometry(0, 3, line)).toBeCloseTo(haversineMeters(0, 3, 0, 1), 3);
    expect(metersToGeometry(0, 0, { type: 'MultiPoint', coordinates: [[0, 2], [0, 1]] })).toBeCloseTo(111_195, -1);
  });
});
