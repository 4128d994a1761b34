/*
 * Locations: the places stock is kept. Each batch is at one of them, and a location says which
 * destinations it serves and how much it is preferred, for the routing of lines and holds to places
 * that a later step adds. Locations are few and change rarely.
 *
 * One location exists from the start, built in: `default`, where every batch added without a
 * location is, so that a client that never names a location sees the service as it was before
 * there were any.
 */

export const DEFAULT_LOCATION_ID = 'default';

/** What `serves` holds alone for a location that serves every destination. */
export const SERVES_EVERYWHERE = '*';

/** Where a location is on the map, in degrees (WGS 84): for the routing by distance a later step may add. */
export interface Position {
  readonly lat: number;
  readonly lng: number;
}

export interface Location {
  readonly id: string;
  readonly name: string;
  /** 0 to 1,000: the lower, the more a location is preferred among those that can serve a destination. */
  readonly priority: number;
  /** ISO 3166-1 alpha-2 country codes, each once, or [SERVES_EVERYWHERE] alone. */
  readonly serves: readonly string[];
  /** An inactive location takes no new line, hold or transfer; what it has stays (routing, a later step, will read this). */
  readonly active: boolean;
  readonly position?: Position;
}
