import { DEFAULT_LOCATION, type Location } from '../../domain/locations';
import { ROUTING_LOCATIONS_MAX_AGE_MS } from '../../domain/ports';
import type { Batch } from '../../domain/model';
import { MAX_PARTS_PER_LINE } from '../../domain/split-lines';
import type { Inventory } from '../invariants';
import type { Failure } from './judge';
import type { Answer, Reached } from './observed';

/*
 * What a sequential reference model can judge of a run: its answers against the stock as it stood
 * between the run's commits (the run reads the table after each commit, at rest). A single
 * line's rule is simple enough to judge here: a refusal ("out of stock") must have been true at some
 * moment while the request ran, and a line put on a shipment must have found, at some moment before
 * it was written, no batch in stock that could take it. Units of a hold that has expired count as
 * free, as they do for the service. A request routes by the locations as its process last read them,
 * so each is judged by every state of them it may have seen.
 */

/** The stock as it stood from one commit to the next: from `step` (at the run's clock `at`) on. */
export interface Moment {
  readonly step: number;
  readonly at: number;
  readonly inventory: Inventory;
}

interface Routing {
  readonly location?: string;
  readonly destination?: { readonly country: string };
}

/**
 * How old the locations a process routes by may be: it keeps them up to 30 s, and a location it has
 * not seen yet up to a second (docs/architecture.md), so a request may route by any state of them
 * in that time before it.
 */
const ROUTING_MAY_LAG_MS = ROUTING_LOCATIONS_MAX_AGE_MS;

const locationsOf = (stored: readonly Location[]): Location[] =>
  stored.some(({ id }) => id === DEFAULT_LOCATION.id) ? [...stored] : [DEFAULT_LOCATION, ...stored];

/**
 * Every state of the locations a request sent at `sentTime` may route by at `at`: it reads them as
 * it starts, kept up to ROUTING_MAY_LAG_MS, and a run's clock may pass minutes before its stock is read.
 */
const routingViews = (timeline: readonly Moment[], sentTime: number, at: number): Location[][] => {
  const inForce = timeline.filter((moment, index) => (timeline[index + 1]?.at ?? Number.MAX_SAFE_INTEGER) >= Math.min(sentTime, at) - ROUTING_MAY_LAG_MS && moment.at <= at);
  const views = new Map(inForce.map(({ inventory }) => [JSON.stringify(inventory.storedLocations), locationsOf(inventory.storedLocations)]));
  return [...views.values()];
};

/** The batches of `sku` a line routed so may come from, at a moment, by a state of the locations. */
const eligible = (inventory: Inventory, locations: readonly Location[], sku: string, { location, destination }: Routing): Batch[] => {
  const places = new Set(
    locations
      .filter(({ id, active, serves }) => active && (!location || id === location) && (!destination || serves.includes('*') || serves.includes(destination.country)))
      .map(({ id }) => id),
  );
  return inventory.batches.filter((batch) => batch.sku === sku && places.has(batch.location ?? DEFAULT_LOCATION.id));
};

/** A batch's units a line may take at `at`: its available ones and those of its holds expired by then. */
const freeAt = (inventory: Inventory, batch: Batch, at: number): number =>
  batch.available +
  inventory.heldUnits.filter(({ sku, ref, units }) => sku === batch.sku && ref === batch.ref && Date.parse(units.expiresAt) <= at).reduce((sum, { units }) => sum + units.qty, 0);

/**
 * The moments in force over [from, to] of the run's steps, each with the earliest time it was in
 * force then, and every state of the locations a request may have routed by at that time.
 */
const momentsOver = (timeline: readonly Moment[], from: number, to: number, sentTime: number): { inventory: Inventory; at: number; views: Location[][] }[] => {
  const inForce = timeline.filter(({ step }, index) => step <= to && (timeline[index + 1]?.step ?? Number.MAX_SAFE_INTEGER) > from);
  return inForce.map(({ inventory, at }) => {
    const earliest = Math.max(at, sentTime);
    return { inventory, at: earliest, views: routingViews(timeline, sentTime, earliest) };
  });
};

/** A batch that could take `qty` at a moment whichever state of the locations the request routed by; undefined if some state leaves none. */
const roomByEveryView = (
  { inventory, at, views }: { inventory: Inventory; at: number; views: Location[][] },
  sku: string,
  qty: number,
  routing: Routing,
  inStockOnly: boolean,
): Batch | undefined => {
  const found = views.map((view) => eligible(inventory, view, sku, routing).find((batch) => (!inStockOnly || batch.eta === null) && freeAt(inventory, batch, at) >= qty));
  return found.every(Boolean) ? found[0] : undefined;
};

/**
 * Whether a line split as `split` allows could be placed at a moment whichever state of the locations
 * the request routed by: the free units of the eligible batches at one location (`batches`), or at
 * all of them (`locations`), hold `qty` within MAX_PARTS_PER_LINE batches.
 */
const splitRoomByEveryView = ({ inventory, at, views }: { inventory: Inventory; at: number; views: Location[][] }, sku: string, qty: number, routing: Routing, split: 'batches' | 'locations'): boolean =>
  views.every((view) => {
    const free = eligible(inventory, view, sku, routing).map((batch) => ({ place: batch.location ?? DEFAULT_LOCATION.id, units: freeAt(inventory, batch, at) }));
    const holds = (some: readonly { units: number }[]) =>
      some
        .map(({ units }) => units)
        .sort((a, b) => b - a)
        .slice(0, MAX_PARTS_PER_LINE)
        .reduce((sum, units) => sum + Math.max(units, 0), 0) >= qty;
    return split === 'locations' ? holds(free) : [...new Set(free.map(({ place }) => place))].some((place) => holds(free.filter((each) => each.place === place)));
  });

export const judgeAgainstModel = (answers: readonly Answer[], reached: readonly Reached[], timeline: readonly Moment[]): Failure[] => {
  const failures: Failure[] = [];
  for (const answer of answers) {
    if (answer.send.kind !== 'http' || answer.send.routeKey !== 'POST /allocate' || answer.answeredAt === undefined) continue;
    const { orderid, sku, qty, split = 'none', ...routing } = answer.send.body as { orderid: string; sku: string; qty: number; split?: 'none' | 'batches' | 'locations' } & Routing;
    const body = JSON.parse(answer.body ?? '{}') as { reason?: string; batchref?: string };
    if (answer.status === 400 && body.reason === 'out_of_stock') {
      const moments = momentsOver(timeline, answer.sentAt, answer.answeredAt, answer.sentTime);
      const roomEverywhere = moments.map((moment) => roomByEveryView(moment, sku, qty, routing, false));
      if (roomEverywhere.length > 0 && roomEverywhere.every(Boolean)) {
        failures.push({ rule: 'refusal-was-true', message: `${answer.actor} refused ${qty} of ${sku} for ${orderid} as out of stock, though ${roomEverywhere.map((batch) => batch?.ref).join(', then ')} could take it throughout` });
      } else if (split !== 'none' && moments.length > 0 && moments.every((moment) => splitRoomByEveryView(moment, sku, qty, routing, split))) {
        failures.push({ rule: 'refusal-was-true', message: `${answer.actor} refused ${qty} of ${sku} for ${orderid} as out of stock, though its batches could hold it split over ${split} throughout` });
      }
    }
    // A split line's parts are judged against the rule by test/reliability/split-model.test.ts, not here.
    if (answer.status === 201 && split === 'none') {
      const line = `ORDER#${orderid} LINE#${sku}`;
      const written = reached.find(({ actor, committed, items }) => actor === answer.actor && committed && items.includes(line));
      const after = written && timeline.find(({ step }) => step === written.step);
      const batch = after?.inventory.batches.find(({ ref }) => ref === body.batchref);
      if (!written || batch?.eta === null || batch?.eta === undefined) continue;
      // A take from a spread batch's pieces does not name the batch's eta (the batch item is the one
      // those takes are spread away from): a PATCH making it a shipment meanwhile is not judged here.
      const window = momentsOver(timeline, answer.sentAt, written.step - 1, answer.sentTime);
      const wasInStock = window.some(({ inventory }) => inventory.batches.some(({ ref, eta }) => ref === batch.ref && eta === null));
      if (batch.pieces && wasInStock) continue;
      const inStockWithRoom = window.map((moment) => roomByEveryView(moment, sku, qty, routing, true));
      if (inStockWithRoom.length > 0 && inStockWithRoom.every(Boolean)) {
        failures.push({ rule: 'in-stock-before-shipments', message: `${answer.actor} put ${orderid}/${sku} on shipment ${body.batchref}, though ${inStockWithRoom.map((other) => other?.ref).join(', then ')} in stock could take it throughout` });
      }
    }
  }
  return failures;
};
