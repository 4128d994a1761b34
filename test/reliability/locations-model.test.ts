import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestTable, createTestTable } from '../support/dynamodb';
import { routeEvent } from '../support/events';
import { muteTelemetry } from '../support/telemetry';
import { findViolations, readInventory } from '../../tools/invariants';
import { seedOr } from './support/seed';
import { type Answer, type HandlerService, serviceOver } from './support/service';
import { emptyTable } from './support/table-contents';

/*
 * Stock in many places against a reference model of docs/api.md ("Locations", "Where a line goes",
 * "POST /orders"): any sequence of locations created, replaced and closed, batches added at them,
 * lines and orders routed to a destination or a location, repeats and cancels, answered as the
 * model answers, the table ending as the model holds. The model shares no code with the service:
 * its rule for an order is a search of every plan, where the service's searches sets of locations.
 */

const SEED = seedOr(32_2026);
const NUM_RUNS = 25;

interface Position {
  readonly lat: number;
  readonly lng: number;
}
interface ModelLocation {
  readonly id: string;
  readonly name: string;
  readonly priority: number;
  readonly serves: readonly string[];
  readonly active: boolean;
  readonly position?: Position;
}
interface ModelBatch {
  readonly ref: string;
  readonly sku: string;
  readonly qty: number;
  available: number;
  readonly eta: string | null;
  readonly location: string;
}
interface ModelLine {
  readonly orderid: string;
  readonly sku: string;
  readonly qty: number;
  readonly batchref: string;
}
interface Routing {
  readonly destination?: { readonly country: string; readonly position?: Position };
  readonly location?: string;
}

const DEFAULT_LOCATION: ModelLocation = { id: 'default', name: 'Default', priority: 0, serves: ['*'], active: true };
/** Where each place is, when a PUT gives it a position: far enough apart that distance decides. */
const POSITIONS: Readonly<Record<string, Position>> = {
  default: { lat: 47.2, lng: -1.55 },
  north: { lat: 50.63, lng: 3.06 },
  south: { lat: 43.3, lng: 5.37 },
  east: { lat: 48.57, lng: 7.75 },
};
/**
 * Each order's routing is its id's, so that a repeat of a line or an order asks for what it first
 * asked for: lines without routing, to a country with or without a point, from one place.
 */
const ROUTING_OF: Readonly<Record<string, Routing>> = {
  o1: {},
  o2: {},
  o3: { destination: { country: 'FR' } },
  o4: { destination: { country: 'DE', position: { lat: 52.52, lng: 13.4 } } },
  o5: { location: 'north' },
  o6: { destination: { country: 'FR', position: { lat: 48.86, lng: 2.35 } } },
};

const EARTH_RADIUS_KM = 6371;
/** The great circle's length between two points (haversine), as docs/api.md ranks places by. */
const distanceKm = (a: Position, b: Position) => {
  const rad = (degrees: number) => (degrees * Math.PI) / 180;
  const h = Math.sin(rad(b.lat - a.lat) / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(rad(b.lng - a.lng) / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
};

interface Expected {
  readonly status: number;
  readonly body: unknown;
}
const json = (status: number, body: unknown): Expected => ({ status, body });
const OK = (status: number): Expected => ({ status, body: 'OK' });
const unknownLocation = (id: string) =>
  json(400, { message: 'Invalid request body', code: 'unknown_location', issues: [{ path: 'location', message: `location must be the id of an existing location: there is no location ${id}` }] });

type Request =
  | { readonly kind: 'put-location'; readonly id: string; readonly body: Omit<ModelLocation, 'id'> }
  | { readonly kind: 'add-batch'; readonly body: { ref: string; sku: string; qty: number; eta: string | null; location?: string } }
  | { readonly kind: 'allocate'; readonly body: { orderid: string; sku: string; qty: number } }
  | { readonly kind: 'order'; readonly body: { orderid: string; lines: Array<{ sku: string; qty: number }> } }
  | { readonly kind: 'cancel'; readonly orderid: string; readonly sku: string }
  | { readonly kind: 'read-batch'; readonly ref: string }
  | { readonly kind: 'read-locations' };

/** The contract, as small as it can be written, for what locations change. */
class ReferenceModel {
  readonly locations = new Map<string, ModelLocation>();
  readonly batches = new Map<string, ModelBatch>();
  readonly lines = new Map<string, ModelLine>();

  answer(request: Request): Expected {
    switch (request.kind) {
      case 'put-location':
        return this.putLocation(request.id, request.body);
      case 'add-batch':
        return this.addBatch(request.body);
      case 'allocate':
        return this.allocate(request.body);
      case 'order':
        return this.order(request.body);
      case 'cancel':
        return this.cancel(request.orderid, request.sku);
      case 'read-batch': {
        const batch = this.batches.get(request.ref);
        return batch ? json(200, this.view(batch)) : json(404, { message: `Batch ${request.ref} not found`, code: 'unknown_batch' });
      }
      case 'read-locations':
        return json(200, { locations: this.allLocations().sort((a, b) => a.priority - b.priority || (a.id < b.id ? -1 : 1)) });
    }
  }

  private allLocations(): ModelLocation[] {
    return [...(this.locations.has('default') ? [] : [DEFAULT_LOCATION]), ...this.locations.values()];
  }

  private putLocation(id: string, body: Omit<ModelLocation, 'id'>): Expected {
    const location = { id, ...body };
    const created = id !== 'default' && !this.locations.has(id);
    this.locations.set(id, location);
    return json(created ? 201 : 200, location);
  }

  private addBatch({ ref, sku, qty, eta, location = 'default' }: { ref: string; sku: string; qty: number; eta: string | null; location?: string }): Expected {
    if (location !== 'default' && !this.locations.has(location)) return unknownLocation(location);
    const existing = this.batches.get(ref);
    if (existing) {
      const same = existing.sku === sku && existing.qty === qty && existing.eta === eta && existing.location === location;
      return same ? OK(200) : json(409, { message: `Batch ${ref} already exists`, code: 'batch_exists' });
    }
    this.batches.set(ref, { ref, sku, qty, available: qty, eta, location });
    return OK(201);
  }

  /** The locations a routing allows, or undefined when it names one that does not exist. */
  private eligible({ destination, location }: Routing): ModelLocation[] | undefined {
    const all = this.allLocations();
    if (location !== undefined && !all.some(({ id }) => id === location)) return undefined;
    return all.filter(
      (candidate) =>
        candidate.active &&
        (location === undefined || candidate.id === location) &&
        (destination === undefined || candidate.serves.includes('*') || candidate.serves.includes(destination.country)),
    );
  }

  /** Which of the request's `location` and `destination` left no location eligible. */
  private whyNoneEligible({ destination, location }: Routing): string {
    const named = this.allLocations().find(({ id }) => id === location);
    const servesNot = named && destination && !named.serves.includes('*') && !named.serves.includes(destination.country) ? `does not serve ${destination.country}` : undefined;
    if (named && !named.active) return `location ${named.id} is inactive${servesNot ? ` and ${servesNot}` : ''}`;
    if (named && servesNot) return `location ${named.id} ${servesNot}`;
    return destination ? `no active location serves ${destination.country}` : 'no location is active';
  }

  /** The batches at the eligible places that can take the line whole, best first by the single-line rule. */
  private ranked(sku: string, qty: number, eligible: readonly ModelLocation[], routing: Routing): ModelBatch[] {
    const place = new Map(eligible.map((location) => [location.id, location]));
    const distance = (id: string) => {
      const position = place.get(id)?.position;
      return position && routing.destination?.position ? distanceKm(position, routing.destination.position) : Number.POSITIVE_INFINITY;
    };
    const key = (batch: ModelBatch) => [batch.eta === null ? 0 : 1, batch.eta ?? '', place.get(batch.location)?.priority ?? 0, distance(batch.location), batch.location, batch.ref] as const;
    const compare = (a: ModelBatch, b: ModelBatch) => {
      const [ka, kb] = [key(a), key(b)];
      for (let index = 0; index < ka.length; index++) if (ka[index] !== kb[index]) return (ka[index] as number | string) < (kb[index] as number | string) ? -1 : 1;
      return 0;
    };
    return [...this.batches.values()].filter((batch) => batch.sku === sku && batch.available >= qty && place.has(batch.location)).sort(compare);
  }

  private known(sku: string): boolean {
    return [...this.batches.values()].some((batch) => batch.sku === sku);
  }

  private located(line: ModelLine) {
    return { ...line, location: (this.batches.get(line.batchref) as ModelBatch).location };
  }

  private allocate({ orderid, sku, qty }: { orderid: string; sku: string; qty: number }): Expected {
    const routing = ROUTING_OF[orderid] as Routing;
    if (!this.known(sku)) return json(400, { message: `Invalid sku ${sku}`, code: 'unknown_sku' });
    const eligible = this.eligible(routing);
    if (!eligible) return unknownLocation(routing.location as string);
    const existing = this.lines.get(lineKey(orderid, sku));
    if (existing) {
      return existing.qty === qty
        ? json(200, { batchref: existing.batchref, location: this.located(existing).location })
        : json(409, { message: `Order ${orderid} already has a line for sku ${sku} with qty ${existing.qty}`, code: 'line_exists' });
    }
    const [chosen] = this.ranked(sku, qty, eligible, routing);
    if (!chosen) {
      return eligible.length === 0
        ? json(400, { message: `No location serves the request for sku ${sku}: ${this.whyNoneEligible(routing)}`, code: 'no_location', reason: 'no_location' })
        : json(400, { message: `Out of stock for sku ${sku}`, code: 'out_of_stock', reason: 'out_of_stock' });
    }
    chosen.available -= qty;
    this.lines.set(lineKey(orderid, sku), { orderid, sku, qty, batchref: chosen.ref });
    return json(201, { batchref: chosen.ref, location: chosen.location });
  }

  /**
   * A line already allocated with another qty refuses the order; one with the same qty is done. The
   * others are planned together: each line in stock where it can be, then the plan of every
   * combination of the lines' batches that uses the fewest locations, then, line by line by SKU,
   * the batch the single-line rule ranks best.
   */
  private order({ orderid, lines }: { orderid: string; lines: Array<{ sku: string; qty: number }> }): Expected {
    const routing = ROUTING_OF[orderid] as Routing;
    const eligible = this.eligible(routing);
    if (!eligible) return unknownLocation(routing.location as string);
    const existing = lines.flatMap(({ sku }) => this.lines.get(lineKey(orderid, sku)) ?? []);
    const conflicting = existing.filter((line) => lines.some(({ sku, qty }) => sku === line.sku && qty !== line.qty));
    if (conflicting.length > 0) {
      return json(409, { message: `Order ${orderid} already has lines with other quantities`, code: 'line_exists', lines: bySku(conflicting.map(({ sku, qty }) => ({ sku, qty }))) });
    }
    const pending = lines.filter(({ sku }) => !this.lines.has(lineKey(orderid, sku)));
    const refusals = pending.flatMap(({ sku, qty }) => {
      if (!this.known(sku)) return [{ sku, reason: 'unknown_sku' }];
      if (this.ranked(sku, qty, eligible, routing).length > 0) return [];
      return [{ sku, reason: eligible.length === 0 ? 'no_location' : 'out_of_stock' }];
    });
    if (refusals.length > 0) {
      const why = refusals.some(({ reason }) => reason === 'no_location') ? `: ${this.whyNoneEligible(routing)}` : '';
      return json(400, { message: `Cannot allocate order ${orderid}${why}`, code: 'order_refused', lines: refusals });
    }

    const options = bySku([...pending]).map(({ sku, qty }) => {
      const ranked = this.ranked(sku, qty, eligible, routing);
      const inStock = ranked.filter(({ eta }) => eta === null);
      return { sku, qty, batches: inStock.length > 0 ? inStock : ranked };
    });
    let best: { places: number; ranks: number[] } | undefined;
    let plan: ModelBatch[] = [];
    const search = (index: number, chosen: ModelBatch[], ranks: number[]) => {
      if (index === options.length) {
        const places = new Set(chosen.map(({ location }) => location)).size;
        const better = !best || places < best.places || (places === best.places && compareRanks(ranks, best.ranks) < 0);
        if (better) [best, plan] = [{ places, ranks: [...ranks] }, [...chosen]];
        return;
      }
      for (const [rank, batch] of (options[index] as (typeof options)[number]).batches.entries()) search(index + 1, [...chosen, batch], [...ranks, rank]);
    };
    search(0, [], []);
    for (const [index, { sku, qty }] of options.entries()) {
      const batch = plan[index] as ModelBatch;
      batch.available -= qty;
      this.lines.set(lineKey(orderid, sku), { orderid, sku, qty, batchref: batch.ref });
    }
    const answered = lines.map(({ sku }) => {
      const { orderid: _, ...line } = this.located(this.lines.get(lineKey(orderid, sku)) as ModelLine);
      return line;
    });
    return json(pending.length > 0 ? 201 : 200, { orderid, lines: bySku(answered) });
  }

  private cancel(orderid: string, sku: string): Expected {
    const line = this.lines.get(lineKey(orderid, sku));
    if (!line) return json(404, { message: `Order ${orderid} has no line for sku ${sku}`, code: 'unknown_line' });
    this.lines.delete(lineKey(orderid, sku));
    (this.batches.get(line.batchref) as ModelBatch).available += line.qty;
    return json(204, '');
  }

  private view({ ref, sku, qty, available, eta, location }: ModelBatch) {
    return { ref, sku, qty, allocated: qty - available, held: 0, available, eta, location };
  }
}

const lineKey = (orderid: string, sku: string) => JSON.stringify([orderid, sku]);
const bySku = <T extends { sku: string }>(lines: T[]): T[] => lines.sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0));
const compareRanks = (a: readonly number[], b: readonly number[]) => {
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return (a[index] as number) - (b[index] as number);
  return 0;
};

const locationId = fc.constantFrom('default', 'north', 'south', 'east');
const putLocation = fc
  .record({
    id: locationId,
    name: fc.constantFrom('Shelf', 'Store'),
    priority: fc.constantFrom(0, 1, 2, 5),
    serves: fc.constantFrom(['*'], ['FR'], ['DE'], ['DE', 'FR']),
    active: fc.constantFrom(true, true, true, false),
    placed: fc.boolean(),
  })
  .map(({ id, placed, ...body }): Request => ({ kind: 'put-location', id, body: { ...body, ...(placed ? { position: POSITIONS[id] as Position } : {}) } }));
const sku = fc.constantFrom('LAMP', 'LAMP', 'SOFA', 'RUG');
const addBatch = fc
  .record({
    ref: fc.constantFrom('b1', 'b2', 'b3', 'b4', 'b5', 'b6', 'b7', 'b8'),
    sku: fc.constantFrom('LAMP', 'SOFA'),
    qty: fc.integer({ min: 1, max: 12 }),
    eta: fc.constantFrom(null, null, '2031-01-10', '2031-02-20'),
    location: fc.constantFrom(undefined, 'default', 'north', 'south', 'east'),
  })
  .map(({ location, ...body }): Request => ({ kind: 'add-batch', body: { ...body, ...(location === undefined ? {} : { location }) } }));
const orderid = fc.constantFrom(...Object.keys(ROUTING_OF));
const qty = fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 1, max: 4 }) }, fc.integer({ min: 1, max: 12 }));
const allocate = fc.record({ orderid, sku, qty }).map((body): Request => ({ kind: 'allocate', body }));
const order = fc
  .record({ orderid, lines: fc.uniqueArray(fc.record({ sku, qty }), { minLength: 1, maxLength: 3, selector: (line) => line.sku }) })
  .map((body): Request => ({ kind: 'order', body }));
const cancel = fc.record({ orderid, sku }).map((line): Request => ({ kind: 'cancel', ...line }));
const readBatch = fc.constantFrom('b1', 'b2', 'b3').map((ref): Request => ({ kind: 'read-batch', ref }));

const sequence = fc
  .tuple(fc.array(putLocation, { minLength: 2, maxLength: 4 }), fc.array(addBatch, { minLength: 3, maxLength: 6 }), fc.array(
    fc.oneof(
      { weight: 2, arbitrary: putLocation },
      { weight: 2, arbitrary: addBatch },
      { weight: 5, arbitrary: allocate },
      { weight: 4, arbitrary: order },
      { weight: 1, arbitrary: cancel },
      { weight: 1, arbitrary: readBatch },
      { weight: 1, arbitrary: fc.constant<Request>({ kind: 'read-locations' }) },
    ),
    { minLength: 10, maxLength: 30 },
  ))
  .map(([locations, batches, rest]) => [...locations, ...batches, ...rest]);

const send = (service: HandlerService, request: Request): Promise<Answer> => {
  switch (request.kind) {
    case 'put-location':
      return service.invoke(routeEvent('PUT /locations/{id}', { pathParameters: { id: request.id }, body: request.body }));
    case 'add-batch':
      return service.addBatch(request.body);
    case 'allocate':
      return service.allocate({ ...request.body, ...ROUTING_OF[request.body.orderid] });
    case 'order':
      return service.invoke(routeEvent('POST /orders', { body: { ...request.body, ...ROUTING_OF[request.body.orderid] } }));
    case 'cancel':
      return service.invoke(routeEvent('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid: request.orderid, sku: request.sku } }));
    case 'read-batch':
      return service.invoke(routeEvent('GET /batches/{ref}', { pathParameters: { ref: request.ref } }));
    case 'read-locations':
      return service.invoke(routeEvent('GET /locations'));
  }
};

describe(`stock in many places against a reference model of the contract (seed ${SEED})`, () => {
  let table: TestTable;
  beforeAll(async () => {
    table = await createTestTable();
    muteTelemetry();
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await table?.drop();
  });

  /** The kinds of answer the runs met, so that a run of sequences that never reach a rule does not pass for a check of it. */
  const met = new Map<string, number>();
  const tally = (status: number, body: unknown) => {
    const { reason, issues, lines, location } = (body ?? {}) as { reason?: string; issues?: unknown; lines?: Array<{ location?: string; reason?: string }>; location?: string };
    const kinds = [
      ...(reason ? [reason] : []),
      ...(issues ? ['unknown location'] : []),
      ...(lines ?? []).flatMap((line) => (line.reason ? [line.reason] : [])),
      ...(status === 201 && location !== undefined && location !== 'default' ? ['a line away from default'] : []),
      ...(status === 201 && lines && new Set(lines.map((line) => line.location)).size > 1 ? ['an order at two places'] : []),
      ...(status === 201 && lines && lines.length > 1 && new Set(lines.map((line) => line.location)).size === 1 ? ['an order kept at one place'] : []),
    ];
    for (const kind of kinds) met.set(kind, (met.get(kind) ?? 0) + 1);
  };

  /** Every answer held to the model's, and the table at the end to what the model holds. */
  const check = async (requests: readonly Request[]) => {
    await emptyTable(table.documentClient, table.tableName);
    const model = new ReferenceModel();
    // A new repository each run: the locations a process keeps for routing are not those of the run before.
    const service = serviceOver(table.repository());
    for (const [index, request] of requests.entries()) {
      const expected = model.answer(request);
      const { status, body } = await send(service, request);
      expect({ status, body }, `answer to request ${index}: ${JSON.stringify(request)}`).toEqual(expected);
      tally(status, body);
    }
    const inventory = await readInventory(table.documentClient, table.tableName);
    const byRef = <T extends { ref: string }>(items: T[]) => items.sort((a, b) => (a.ref < b.ref ? -1 : 1));
    expect(byRef(inventory.batches.map(({ ref, sku, qty, available, eta, location }) => ({ ref, sku, qty, available, eta, location: location ?? 'default' })))).toEqual(
      byRef([...model.batches.values()].map((batch) => ({ ...batch }))),
    );
    const byLine = <T extends { orderid: string; sku: string }>(items: T[]) => items.sort((a, b) => (lineKey(a.orderid, a.sku) < lineKey(b.orderid, b.sku) ? -1 : 1));
    expect(byLine(inventory.lines.map(({ orderid, sku, qty, batchref }) => ({ orderid, sku, qty, batchref })))).toEqual(byLine([...model.lines.values()]));
    expect([...inventory.locations].sort()).toEqual([...model.locations.keys()].sort());
    expect(findViolations(inventory)).toEqual([]);
  };

  it('answers every request of any sequence as the model does, and ends holding what the model holds', async () => {
    await fc.assert(
      fc.asyncProperty(sequence, async (requests) => {
        await check(requests);
      }),
      { seed: SEED, numRuns: NUM_RUNS },
    );
    const kinds = ['no_location', 'out_of_stock', 'unknown_sku', 'unknown location', 'a line away from default', 'an order at two places', 'an order kept at one place'];
    expect(kinds.filter((kind) => !met.has(kind)), JSON.stringify(Object.fromEntries(met))).toEqual([]);
  }, 240_000);
});
