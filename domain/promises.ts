import type { Location } from './locations';
import { type Batch, type LineRefusal, type Placement, locationOf, takesOf } from './model';
import type { Destination } from './routing';

/*
 * What can be promised (docs/api.md, "Promises"): the plan an order would make, in parcels, each
 * with the day it ships and, where its location says how long the way takes, the day it arrives.
 * Days are calendar days in UTC (`YYYY-MM-DD`), so that they compare as strings.
 */

/** A part of a promised line: its batch, its units, and the batch's `eta` (null: on the shelf). */
export interface PromisedPart {
  readonly batchref: string;
  readonly qty: number;
  readonly eta: string | null;
}

/** A line's units in one parcel: all of them, or, for a line split over locations, its share there. */
export interface PromisedLine {
  readonly sku: string;
  readonly qty: number;
  readonly parts: readonly PromisedPart[];
}

/** What leaves one location: its lines, the day they ship, and the day they arrive where that is known. */
export interface Parcel {
  readonly location: string;
  readonly shipsOn: string;
  readonly arrivesBy?: string;
  readonly lines: readonly PromisedLine[];
}

/** A line no plan can hold, as an order refuses it, with the most units a line of its SKU could be promised under its split and routing. */
export interface UnpromisedLine extends LineRefusal {
  readonly promisableQty: number;
}

/**
 * A cart's promise: its parcels, and the day the last of them ships (and arrives, when each says);
 * or, when a line cannot be held, no parcel, since the order would refuse the whole cart, and the
 * lines refused.
 */
export interface CartPromise {
  readonly parcels: readonly Parcel[];
  readonly shipsOn?: string;
  readonly arrivesBy?: string;
  readonly refused: readonly UnpromisedLine[];
}

/** How long a location takes, at most, in days: the bound of handling_days and of each transit_days entry (docs/api.md, "Locations"). */
export const MAX_LEAD_DAYS = 365;

/** The `transit_days` key of every country a location names no time for. */
export const ANY_COUNTRY = '*';

/** The day of an instant, in UTC. */
export const dayOf = (now: number): string => new Date(now).toISOString().slice(0, 10);

/** The day `days` after `day`. */
export const daysAfter = (day: string, days: number): string => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

const later = (a: string, b: string): string => (a < b ? b : a);

/** How many days the way from `location` to the destination's country takes: its own entry, or the `*` one, or unknown. */
export const transitDaysTo = (location: Location | undefined, destination: Destination | undefined): number | undefined => {
  if (!destination || !location?.transitDays) return undefined;
  return location.transitDays[destination.country] ?? location.transitDays[ANY_COUNTRY];
};

/**
 * The promise of a plan that placed every line: a parcel for each location the parts are at, by
 * location id, its lines by SKU. A parcel ships today when every part of it is on the shelf, else on
 * the latest `eta` among its parts (today, for one already past), and then after its location's
 * `handling_days`; it arrives `transit_days` later, for the destination's country, when its location
 * says. The cart ships on the latest parcel's day, and arrives by the latest one's when each says.
 */
export const promiseOf = (placements: readonly Placement[], locations: readonly Location[], today: string, destination?: Destination): CartPromise => {
  const byLocation = new Map<string, Map<string, { qty: number; parts: PromisedPart[] }>>();
  for (const placement of placements) {
    const { sku } = placement.allocation;
    for (const { batch, qty } of takesOf(placement)) {
      const lines = byLocation.get(locationOf(batch)) ?? new Map<string, { qty: number; parts: PromisedPart[] }>();
      byLocation.set(locationOf(batch), lines);
      const line = lines.get(sku) ?? { qty: 0, parts: [] };
      lines.set(sku, line);
      line.qty += qty;
      line.parts.push(partOf(batch, qty));
    }
  }
  const known = new Map(locations.map((location) => [location.id, location]));
  const parcels = [...byLocation.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([id, lines]): Parcel => {
      const location = known.get(id);
      const etas = [...lines.values()].flatMap(({ parts }) => parts.flatMap(({ eta }) => (eta === null ? [] : [eta])));
      const shipsOn = daysAfter(etas.reduce(later, today), location?.handlingDays ?? 0);
      const transit = transitDaysTo(location, destination);
      return {
        location: id,
        shipsOn,
        ...(transit === undefined ? {} : { arrivesBy: daysAfter(shipsOn, transit) }),
        lines: [...lines.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([sku, { qty, parts }]) => ({ sku, qty, parts })),
      };
    });
  const arrivals = parcels.flatMap(({ arrivesBy }) => (arrivesBy === undefined ? [] : [arrivesBy]));
  return {
    parcels,
    ...(parcels.length === 0 ? {} : { shipsOn: parcels.map(({ shipsOn }) => shipsOn).reduce(later) }),
    ...(arrivals.length === parcels.length && parcels.length > 0 ? { arrivesBy: arrivals.reduce(later) } : {}),
    refused: [],
  };
};

const partOf = (batch: Batch, qty: number): PromisedPart => ({ batchref: batch.ref, qty, eta: batch.eta });

