import { DEFAULT_LOCATION_ID } from './locations';
import type { Allocation, LinePart, RoutedAllocation, ShippedUnits } from './model';

/*
 * Shipments (docs/api.md, "Shipments"): units of an order's lines that left the building. A line's
 * `qty` counts the units it still holds on its batches; what it shipped is `shipped`, units by the
 * batch they left. So a shipment takes a line's units off its batch's `qty` and off the line
 * together, and `qty = available + committed + held` stays true of every batch, committed being the
 * lines' units not yet shipped.
 */

/** A shipment as asked: the units of some of the order's lines, from one place (`location`: where the order's unshipped units are, when absent). */
export interface ShipmentRequest {
  readonly shipmentid: string;
  readonly orderid: string;
  readonly location?: string;
  readonly lines: readonly { readonly sku: string; readonly qty: number }[];
}

/** The units of one batch a shipment took. */
export interface ShippedPart {
  readonly batchref: string;
  readonly qty: number;
}

/** A line of a shipment: its units, and the batches they left, in the order of the line's parts. */
export interface ShipmentLine {
  readonly sku: string;
  readonly qty: number;
  readonly parts: readonly ShippedPart[];
}

/** A shipment made: a parcel that left `location` at `shippedAt`. */
export interface Shipment {
  readonly shipmentid: string;
  readonly orderid: string;
  readonly location: string;
  readonly shippedAt: string;
  readonly lines: readonly ShipmentLine[];
}

/** A line as a shipment leaves it, beside the line as read, which its write is conditioned on. */
export interface LineShipped {
  readonly before: Allocation;
  readonly after: Allocation;
}

/** The units a line has shipped, from every batch. */
export const shippedQtyOf = (line: Pick<Allocation, 'shipped'>): number => (line.shipped ?? []).reduce((sum, { qty }) => sum + qty, 0);

/** The line's units not yet shipped at each place, as the line's parts are (a whole line: its batch's location). */
export const unshippedParts = (line: RoutedAllocation): readonly LinePart[] =>
  line.split ? line.split.parts : line.qty > 0 ? [{ batchref: line.batchref, qty: line.qty, location: line.location }] : [];

/** The units of the line not yet shipped that are at `location`. */
export const unshippedAt = (line: RoutedAllocation, location: string): number =>
  unshippedParts(line).reduce((sum, part) => (part.location === location ? sum + part.qty : sum), 0);

/**
 * Where a shipment that names no location leaves from: the one place the order's unshipped units
 * are. Undefined when they are at several; `default` when none is left (every line then has too few
 * to ship, whatever the place).
 */
export const shipmentLocationOf = (lines: readonly RoutedAllocation[]): string | undefined => {
  const places = new Set(lines.flatMap((line) => unshippedParts(line).map(({ location }) => location)));
  if (places.size > 1) return undefined;
  return [...places][0] ?? DEFAULT_LOCATION_ID;
};

/** The shipped units, `some` added to those of `shipped`, batch by batch, in the order they first shipped. */
const withShipped = (shipped: readonly ShippedUnits[], some: readonly ShippedUnits[]): ShippedUnits[] => {
  const merged = shipped.map((units) => ({ ...units }));
  for (const units of some) {
    const found = merged.find(({ batchref }) => batchref === units.batchref);
    if (found) found.qty += units.qty;
    else merged.push({ ...units });
  }
  return merged;
};

/**
 * `qty` units of the line shipped from `location`: from its parts there, in the order of its parts
 * (a whole line's one part, its batch). The line as it is then, and the units each batch gave. The
 * caller has checked that the line has that many there (unshippedAt).
 */
export const shipFromLine = (line: RoutedAllocation, location: string, qty: number): { readonly after: Allocation; readonly parts: ShippedPart[] } => {
  let left = qty;
  const taken: ShippedUnits[] = [];
  for (const part of unshippedParts(line)) {
    if (left === 0) break;
    if (part.location !== location) continue;
    const units = Math.min(part.qty, left);
    taken.push({ batchref: part.batchref, qty: units, location: part.location });
    left -= units;
  }
  if (left > 0) throw new Error(`Shipping ${qty} of line ${line.orderid}/${line.sku}, which has ${qty - left} at ${location}`);
  const { location: _, ...allocation } = line;
  const shipped = withShipped(line.shipped ?? [], taken);
  const takenFrom = (batchref: string) => taken.find((units) => units.batchref === batchref)?.qty ?? 0;
  const after: Allocation = line.split
    ? {
        ...allocation,
        qty: line.qty - qty,
        shipped,
        split: {
          ...line.split,
          parts: line.split.parts.flatMap((part) => (part.qty === takenFrom(part.batchref) ? [] : [{ ...part, qty: part.qty - takenFrom(part.batchref) }])),
        },
      }
    : { ...allocation, qty: line.qty - qty, shipped };
  return { after, parts: taken.map(({ batchref, qty: units }) => ({ batchref, qty: units })) };
};

/**
 * Whether a shipment stored answers this request: the same order and lines (each SKU's qty), and the
 * same location when the request names one (one that names none left it to the order, which the
 * stored shipment already settled).
 */
export const isSameShipment = (stored: Shipment, request: ShipmentRequest): boolean => {
  if (stored.orderid !== request.orderid || (request.location !== undefined && request.location !== stored.location)) return false;
  if (stored.lines.length !== request.lines.length) return false;
  return request.lines.every(({ sku, qty }) => stored.lines.some((line) => line.sku === sku && line.qty === qty));
};

/**
 * A line's parts as an answer shows them: each batch the line holds or held units on, with all the
 * units it was given there (those it holds and those it shipped), the batches it holds units on
 * first, in its parts' order, then those it only shipped from.
 */
export const placedParts = (line: Pick<Allocation, 'split' | 'shipped'>): (LinePart & { readonly shipped: number })[] => {
  const shipped = line.shipped ?? [];
  const shippedFrom = (batchref: string) => shipped.find((units) => units.batchref === batchref)?.qty ?? 0;
  const held = (line.split?.parts ?? []).map((part) => ({ ...part, qty: part.qty + shippedFrom(part.batchref), shipped: shippedFrom(part.batchref) }));
  const onlyShipped = shipped.filter(({ batchref }) => !held.some((part) => part.batchref === batchref));
  return [...held, ...onlyShipped.map(({ batchref, qty, location }) => ({ batchref, qty, location, shipped: qty }))];
};
