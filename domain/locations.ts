/*
 * Locations: the places stock is kept (docs/api.md, "Locations"). Each batch is at one of them, and
 * a location says which destinations it serves and how much it is preferred, by which lines and
 * holds are routed to places (domain/routing.ts). Locations are few and change rarely.
 *
 * One location exists from the start, built in: `default`, where every batch added without a
 * location is, so that a client that never names a location sees the service as it was before
 * there were any. It may be replaced like any other, and never goes away.
 */

export const DEFAULT_LOCATION_ID = 'default';

/** What `serves` holds alone for a location that serves every destination. */
export const SERVES_EVERYWHERE = '*';

/** Where a location is on the map, in degrees (WGS 84): routing ranks locations of one priority by their distance to a destination. */
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
  /** An inactive location takes no new line or hold (domain/routing.ts); what it has stays. */
  readonly active: boolean;
  readonly position?: Position;
  /** Whole days between an order and its parcel leaving the location (domain/promises.ts): none when absent. */
  readonly handlingDays?: number;
  /** Whole days a parcel takes from the location, by destination country, `*` for any other: no arrival is promised where none applies. */
  readonly transitDays?: Readonly<Record<string, number>>;
}

/** A location as a client defines it, whole: `active` left out means true. */
export interface LocationDefinition extends Omit<Location, 'active'> {
  readonly active?: boolean;
}

/** The location a definition makes: active unless it says not, and with no transit days where it names none. */
export const definedLocation = ({ active = true, transitDays, ...definition }: LocationDefinition): Location => ({
  ...definition,
  active,
  ...(transitDays === undefined || Object.keys(transitDays).length === 0 ? {} : { transitDays }),
});

/** The built-in location, as it reads until a client replaces it. */
export const DEFAULT_LOCATION: Location = { id: DEFAULT_LOCATION_ID, name: 'Default', priority: 0, serves: [SERVES_EVERYWHERE], active: true };

/** The location as it reads when nothing is stored under `id`: the built-in one for `default`, none for any other. */
export const builtInLocation = (id: string): Location | undefined => (id === DEFAULT_LOCATION_ID ? DEFAULT_LOCATION : undefined);

/** Whether two locations say the same thing: a replacement by the same is a repeat, which changes nothing. */
export const isSameLocation = (a: Location, b: Location): boolean =>
  a.id === b.id &&
  a.name === b.name &&
  a.priority === b.priority &&
  a.active === b.active &&
  a.serves.length === b.serves.length &&
  a.serves.every((code, index) => b.serves[index] === code) &&
  a.position?.lat === b.position?.lat &&
  a.position?.lng === b.position?.lng &&
  a.handlingDays === b.handlingDays &&
  isSameTransit(a.transitDays, b.transitDays);

const isSameTransit = (a: Location['transitDays'], b: Location['transitDays']): boolean => {
  const [aKeys, bKeys] = [Object.keys(a ?? {}), Object.keys(b ?? {})];
  return aKeys.length === bKeys.length && aKeys.every((key) => a?.[key] === b?.[key]);
};

/** Most preferred first: lower priority, then the id, so that the order never depends on the store's. */
export const byPriority = (a: Location, b: Location): number => a.priority - b.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Every location, the stored ones and the built-in one when none replaced it, most preferred first. */
export const allLocationsOf = (stored: readonly Location[]): Location[] => {
  const builtIn = stored.some(({ id }) => id === DEFAULT_LOCATION_ID) ? [] : [DEFAULT_LOCATION];
  return [...stored, ...builtIn].sort(byPriority);
};
