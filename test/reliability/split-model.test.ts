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
 * Split lines against a reference model of docs/api.md ("Split lines", "Where a line goes",
 * "PATCH /batches/{ref}"): any sequence of batches added at three places, lines allocated whole or
 * split over batches or locations, repeats, cancels, reads and changes of a batch's qty that move
 * lines and parts, answered as the model answers, the table ending as the model holds. The model
 * shares no code with the service: it places a split line, and a part moved, by a search of every
 * set of batches, ranked by the rule as the page states it.
 */

const SEED = seedOr(2);
const NUM_RUNS = 25;
const MAX_PARTS = 10;
/** The clock the service stamps lines with: a second a request, so that "newest first" is never a tie. */
const START = Date.parse('2031-01-01T00:00:00.000Z');

type Split = 'none' | 'batches' | 'locations';
interface ModelBatch {
  readonly ref: string;
  readonly sku: string;
  qty: number;
  available: number;
  readonly eta: string | null;
  readonly location: string;
}
interface ModelPart {
  readonly batchref: string;
  readonly qty: number;
}
interface ModelLine {
  readonly orderid: string;
  readonly sku: string;
  readonly qty: number;
  readonly split: Split;
  parts: ModelPart[];
  readonly allocatedAt: number;
}

/** The places, as the run creates them before anything else: `default` first by priority, the others by id. */
const PLACES = [
  { id: 'north', priority: 1 },
  { id: 'south', priority: 1 },
] as const;
const PRIORITY: Readonly<Record<string, number>> = { default: 0, north: 1, south: 1 };
/** Each order's pickup place, if any: a repeat of its line names the same. */
const LOCATION_OF: Readonly<Record<string, string | undefined>> = { o1: undefined, o2: undefined, o3: undefined, o4: 'north' };

interface Expected {
  readonly status: number;
  readonly body: unknown;
}
const json = (status: number, body: unknown): Expected => ({ status, body });

type Request =
  | { readonly kind: 'add-batch'; readonly body: { ref: string; sku: string; qty: number; eta: string | null; location: string } }
  | { readonly kind: 'allocate'; readonly body: { orderid: string; sku: string; qty: number }; readonly split: Split }
  | { readonly kind: 'cancel'; readonly orderid: string; readonly sku: string }
  | { readonly kind: 'change'; readonly ref: string; readonly qty: number }
  | { readonly kind: 'read-order'; readonly orderid: string };

/** The one-line preference: in stock first, then the earliest eta; the place's priority, its id; the ref. */
const byPreference = (a: ModelBatch, b: ModelBatch): number => {
  const eta = (batch: ModelBatch) => batch.eta ?? '';
  const keys = (batch: ModelBatch) => [batch.eta === null ? 0 : 1, eta(batch), PRIORITY[batch.location] ?? 0, batch.location, batch.ref] as const;
  const [ka, kb] = [keys(a), keys(b)];
  for (let index = 0; index < ka.length; index++) if (ka[index] !== kb[index]) return (ka[index] as number | string) < (kb[index] as number | string) ? -1 : 1;
  return 0;
};

const lexicographic = (a: readonly number[], b: readonly number[]): number => {
  for (let index = 0; index < Math.min(a.length, b.length); index++) if (a[index] !== b[index]) return (a[index] as number) - (b[index] as number);
  return a.length - b.length;
};

/** The contract, as small as it can be written, for split lines. */
class ReferenceModel {
  readonly batches = new Map<string, ModelBatch>();
  readonly lines = new Map<string, ModelLine>();
  private readonly skus = new Set<string>();
  private clock = 0;

  answer(request: Request, now: number): Expected {
    this.clock = now;
    switch (request.kind) {
      case 'add-batch':
        return this.addBatch(request.body);
      case 'allocate':
        return this.allocate(request.body, request.split);
      case 'cancel':
        return this.cancel(request.orderid, request.sku);
      case 'change':
        return this.change(request.ref, request.qty);
      case 'read-order':
        return this.readOrder(request.orderid);
    }
  }

  private addBatch(body: { ref: string; sku: string; qty: number; eta: string | null; location: string }): Expected {
    const existing = this.batches.get(body.ref);
    if (existing) {
      const same = existing.sku === body.sku && existing.qty === body.qty && existing.eta === body.eta && existing.location === body.location;
      return same ? json(200, 'OK') : json(409, { message: `Batch ${body.ref} already exists`, code: 'batch_exists' });
    }
    this.batches.set(body.ref, { ...body, available: body.qty });
    this.skus.add(body.sku);
    return json(201, 'OK');
  }

  /** The batches of `sku` the order's line may come from, with units. */
  private eligible(orderid: string, sku: string): ModelBatch[] {
    const location = LOCATION_OF[orderid];
    return [...this.batches.values()].filter((batch) => batch.sku === sku && (location === undefined || batch.location === location)).sort(byPreference);
  }

  /** Every set of batches that holds `qty` as `split` allows, best by the page's rule, filled in the preference's order. */
  private place(qty: number, candidates: readonly ModelBatch[], split: Split): ModelPart[] | undefined {
    const pool = candidates.filter(({ available }) => available > 0);
    let best: { key: number[]; set: ModelBatch[] } | undefined;
    for (let mask = 1; mask < 2 ** pool.length; mask++) {
      const set = pool.filter((_, index) => mask & (2 ** index));
      const places = new Set(set.map(({ location }) => location)).size;
      if (set.reduce((sum, { available }) => sum + available, 0) < qty) continue;
      if ((split === 'none' && set.length > 1) || (split === 'batches' && places > 1) || set.length > MAX_PARTS) continue;
      const key = [set.some(({ eta }) => eta !== null) ? 1 : 0, places, set.length, ...set.map((batch) => pool.indexOf(batch))];
      if (!best || lexicographic(key, best.key) < 0) best = { key, set };
    }
    if (!best) return undefined;
    let left = qty;
    return best.set.map((batch, index, set) => {
      const part = index === set.length - 1 ? left : Math.min(batch.available, left);
      left -= part;
      return { batchref: batch.ref, qty: part };
    });
  }

  private where(part: ModelPart) {
    return { batchref: part.batchref, location: this.batches.get(part.batchref)?.location ?? 'default', qty: part.qty };
  }

  /** Where a line's units are, as an answer names them. */
  private placeView(line: ModelLine) {
    const [first] = line.parts as [ModelPart];
    const whole = { batchref: first.batchref, location: this.where(first).location };
    if (line.split === 'none') return whole;
    const parts = line.parts.map((part) => this.where(part));
    return line.parts.length === 1 ? { ...whole, parts } : { parts };
  }

  private allocate({ orderid, sku, qty }: { orderid: string; sku: string; qty: number }, split: Split): Expected {
    const existing = this.lines.get(`${orderid}/${sku}`);
    if (existing) {
      if (existing.qty !== qty) return json(409, { message: `Order ${orderid} already has a line for sku ${sku} with qty ${existing.qty}`, code: 'line_exists' });
      if (existing.split !== split) return json(409, { message: `Order ${orderid} already has a line for sku ${sku} with another split`, code: 'split_otherwise' });
      return json(200, this.placeView(existing));
    }
    if (!this.skus.has(sku)) return json(400, { message: `Invalid sku ${sku}`, code: 'unknown_sku' });
    const parts = this.place(qty, this.eligible(orderid, sku), split);
    if (!parts) return json(400, { message: `Out of stock for sku ${sku}`, code: 'out_of_stock', reason: 'out_of_stock' });
    for (const part of parts) (this.batches.get(part.batchref) as ModelBatch).available -= part.qty;
    const line = { orderid, sku, qty, split, parts, allocatedAt: this.clock };
    this.lines.set(`${orderid}/${sku}`, line);
    return json(201, this.placeView(line));
  }

  private cancel(orderid: string, sku: string): Expected {
    const line = this.lines.get(`${orderid}/${sku}`);
    if (!line) return json(404, { message: `Order ${orderid} has no line for sku ${sku}`, code: 'unknown_line' });
    for (const part of line.parts) (this.batches.get(part.batchref) as ModelBatch).available += part.qty;
    this.lines.delete(`${orderid}/${sku}`);
    return json(204, '');
  }

  private readOrder(orderid: string): Expected {
    const lines = [...this.lines.values()].filter((line) => line.orderid === orderid).sort((a, b) => (a.sku < b.sku ? -1 : 1));
    if (lines.length === 0) return json(404, { message: `Order ${orderid} has no allocations`, code: 'unknown_order' });
    return json(200, { orderid, lines: lines.map((line) => ({ sku: line.sku, qty: line.qty, ...this.placeView(line) })) });
  }

  /**
   * A new qty; while the batch's lines take more, lines and parts come off it newest first, each in
   * turn: a whole line by the rule for one line, a part by its line's rule for the part; a line that
   * cannot be placed leaves its order.
   */
  private change(ref: string, qty: number): Expected {
    const batch = this.batches.get(ref);
    if (!batch) return json(404, { message: `Batch ${ref} not found`, code: 'unknown_batch' });
    batch.available += qty - batch.qty;
    batch.qty = qty;
    const reallocated: { orderid: string; sku: string; qty: number; from: string; batchref: string | null }[] = [];
    if (batch.available < 0) {
      const onIt = [...this.lines.values()]
        .flatMap((line) => line.parts.filter((part) => part.batchref === ref).map((part) => ({ line, part })))
        .sort((a, b) => b.line.allocatedAt - a.line.allocatedAt);
      const taken: typeof onIt = [];
      let deficit = -batch.available;
      for (const entry of onIt) {
        if (deficit <= 0) break;
        taken.push(entry);
        deficit -= entry.part.qty;
      }
      for (const { line, part } of taken) {
        if (line.split !== 'none') {
          reallocated.push(...this.movePart(batch, line, part));
          continue;
        }
        const to = this.eligible(line.orderid, line.sku).find((other) => other.ref !== ref && other.available >= line.qty);
        batch.available += line.qty;
        if (to) {
          to.available -= line.qty;
          line.parts = [{ batchref: to.ref, qty: line.qty }];
        } else this.lines.delete(`${line.orderid}/${line.sku}`);
        reallocated.push({ orderid: line.orderid, sku: line.sku, qty: line.qty, from: ref, batchref: to?.ref ?? null });
      }
    }
    return json(200, { ref, sku: batch.sku, qty: batch.qty, allocated: batch.qty - batch.available, held: 0, available: Math.max(0, batch.available), eta: batch.eta, location: batch.location, reallocated });
  }

  /**
   * Every set of batches that holds the part's units, ranked by the rule for the line as the move
   * leaves it: none on a shipment, the fewest places of the line (one with `batches`), the fewest
   * parts of the line (units joining a part add none), at most MAX_PARTS, the fewest batches, then
   * the preference; filled in its order, new parts in the moved one's place. None: the line leaves.
   */
  private movePart(from: ModelBatch, line: ModelLine, part: ModelPart) {
    const rest = line.parts.filter((each) => each !== part);
    const placeOf = (batchref: string) => this.batches.get(batchref)?.location;
    const pool = this.eligible(line.orderid, line.sku).filter((batch) => batch.ref !== from.ref && batch.available > 0);
    let best: { key: number[]; set: ModelBatch[] } | undefined;
    for (let mask = 1; mask < 2 ** pool.length; mask++) {
      const set = pool.filter((_, index) => mask & (2 ** index));
      const places = new Set([...rest.map(({ batchref }) => placeOf(batchref)), ...set.map(({ location }) => location)]).size;
      const parts = new Set([...rest.map(({ batchref }) => batchref), ...set.map(({ ref }) => ref)]).size;
      if (set.reduce((sum, { available }) => sum + available, 0) < part.qty) continue;
      if ((line.split === 'batches' && places > 1) || parts > MAX_PARTS) continue;
      const key = [set.some(({ eta }) => eta !== null) ? 1 : 0, places, parts, set.length, ...set.map((batch) => pool.indexOf(batch))];
      if (!best || lexicographic(key, best.key) < 0) best = { key, set };
    }
    from.available += part.qty;
    const { orderid, sku } = line;
    if (!best) {
      for (const other of rest) (this.batches.get(other.batchref) as ModelBatch).available += other.qty;
      this.lines.delete(`${orderid}/${sku}`);
      return [{ orderid, sku, qty: line.qty, from: from.ref, batchref: null }];
    }
    let left = part.qty;
    const placed = best.set.map((batch, index, set) => {
      const qty = index === set.length - 1 ? left : Math.min(batch.available, left);
      left -= qty;
      batch.available -= qty;
      return { batchref: batch.ref, qty };
    });
    const brought = (batchref: string) => placed.find((each) => each.batchref === batchref)?.qty ?? 0;
    line.parts = line.parts.flatMap((each) => {
      if (each === part) return placed.filter(({ batchref }) => !rest.some((other) => other.batchref === batchref));
      return [{ batchref: each.batchref, qty: each.qty + brought(each.batchref) }];
    });
    return placed.map(({ batchref, qty }) => ({ orderid, sku, qty, from: from.ref, batchref }));
  }
}

const REFS = ['b1', 'b2', 'b3', 'b4', 'b5', 'b6', 'b7'] as const;
const addBatch = fc
  .record({
    ref: fc.constantFrom(...REFS),
    sku: fc.constantFrom('LAMP', 'LAMP', 'LAMP', 'SOFA'),
    qty: fc.integer({ min: 1, max: 8 }),
    eta: fc.constantFrom(null, null, null, '2031-03-10', '2031-04-20'),
    location: fc.constantFrom('default', 'north', 'south'),
  })
  .map((body): Request => ({ kind: 'add-batch', body }));
const orderid = fc.constantFrom(...Object.keys(LOCATION_OF));
const allocate = fc
  .record({
    orderid,
    sku: fc.constantFrom('LAMP', 'LAMP', 'SOFA'),
    // Often the same qty again, so that a line is repeated, with its split or another.
    qty: fc.oneof(fc.integer({ min: 1, max: 16 }), fc.constantFrom(3, 9)),
    split: fc.constantFrom<Split>('none', 'batches', 'batches', 'locations', 'locations'),
  })
  .map(({ split, ...body }): Request => ({ kind: 'allocate', body, split }));
const cancel = fc.record({ orderid, sku: fc.constantFrom('LAMP', 'SOFA') }).map((line): Request => ({ kind: 'cancel', ...line }));
const change = fc.record({ ref: fc.constantFrom(...REFS), qty: fc.integer({ min: 0, max: 8 }) }).map((body): Request => ({ kind: 'change', ...body }));
const readOrder = orderid.map((id): Request => ({ kind: 'read-order', orderid: id }));

const sequence = fc
  .tuple(
    fc.array(addBatch, { minLength: 3, maxLength: 7 }),
    fc.array(
      fc.oneof(
        { weight: 2, arbitrary: addBatch },
        { weight: 8, arbitrary: allocate },
        { weight: 2, arbitrary: cancel },
        { weight: 4, arbitrary: change },
        { weight: 1, arbitrary: readOrder },
      ),
      { minLength: 10, maxLength: 30 },
    ),
  )
  .map(([batches, rest]) => [...batches, ...rest]);

/** A sequence random runs seldom reach: a part of 8 taken off its batch, which no batch left can take but two can hold. */
const PART_OVER_SEVERAL_BATCHES: readonly Request[] = [
  ...(['b1', 'b2'] as const).map((ref): Request => ({ kind: 'add-batch', body: { ref, sku: 'LAMP', qty: 8, eta: null, location: 'default' } })),
  { kind: 'add-batch', body: { ref: 'b3', sku: 'LAMP', qty: 6, eta: null, location: 'default' } },
  { kind: 'allocate', body: { orderid: 'o1', sku: 'LAMP', qty: 12 }, split: 'batches' },
  { kind: 'change', ref: 'b1', qty: 2 },
  { kind: 'read-order', orderid: 'o1' },
];

const send = (service: HandlerService, request: Request): Promise<Answer> => {
  switch (request.kind) {
    case 'add-batch':
      return service.addBatch(request.body);
    case 'allocate': {
      const location = LOCATION_OF[request.body.orderid];
      return service.allocate({ ...request.body, ...(location ? { location } : {}), ...(request.split === 'none' ? {} : { split: request.split }) });
    }
    case 'cancel':
      return service.invoke(routeEvent('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid: request.orderid, sku: request.sku } }));
    case 'change':
      return service.invoke(routeEvent('PATCH /batches/{ref}', { pathParameters: { ref: request.ref }, body: { qty: request.qty } }));
    case 'read-order':
      return service.invoke(routeEvent('GET /allocations/{orderid}', { pathParameters: { orderid: request.orderid } }));
  }
};

describe(`split lines against a reference model of the contract (seed ${SEED})`, () => {
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
  const tally = (request: Request, status: number, body: unknown) => {
    const { parts, reallocated, code } = (body ?? {}) as { parts?: unknown[]; reallocated?: { orderid: string; sku: string; batchref: string | null; qty: number }[]; code?: string };
    const movedLines = (reallocated ?? []).filter(({ batchref }) => batchref !== null).map(({ orderid, sku }) => `${orderid}/${sku}`);
    const kinds = [
      ...(code ? [code] : []),
      ...(status === 201 && parts && parts.length > 1 ? ['a line in parts'] : []),
      ...(status === 201 && parts?.length === 1 ? ['a split line whole'] : []),
      ...(request.kind === 'change' && (reallocated ?? []).some(({ batchref }) => batchref !== null) ? ['a move'] : []),
      ...(request.kind === 'change' && (reallocated ?? []).some(({ batchref }) => batchref === null) ? ['a line out of its order'] : []),
      ...(request.kind === 'change' && new Set(movedLines).size < movedLines.length ? ['a part over several batches'] : []),
    ];
    for (const kind of kinds) met.set(kind, (met.get(kind) ?? 0) + 1);
  };

  /** Every answer held to the model's, and the table at the end to what the model holds. */
  const check = async (requests: readonly Request[]) => {
    await emptyTable(table.documentClient, table.tableName);
    const model = new ReferenceModel();
    let now = START;
    const service = serviceOver(table.repository({ clock: () => now }));
    for (const { id, priority } of PLACES) {
      const answer = await service.invoke(routeEvent('PUT /locations/{id}', { pathParameters: { id }, body: { name: id, priority, serves: ['*'] } }));
      expect(answer.status).toBeLessThan(300);
    }
    for (const [index, request] of requests.entries()) {
      now += 1_000;
      const expected = model.answer(request, now);
      const { status, body } = await send(service, request);
      expect({ status, body }, `answer to request ${index}: ${JSON.stringify(request)}`).toEqual(expected);
      tally(request, status, body);
    }
    const inventory = await readInventory(table.documentClient, table.tableName);
    const byRef = <T extends { ref: string }>(items: T[]) => items.sort((a, b) => (a.ref < b.ref ? -1 : 1));
    expect(byRef(inventory.batches.map(({ ref, sku, qty, available, eta, location }) => ({ ref, sku, qty, available, eta, location: location ?? 'default' })))).toEqual(
      byRef([...model.batches.values()].map((batch) => ({ ...batch }))),
    );
    const key = ({ orderid, sku }: { orderid: string; sku: string }) => `${orderid}/${sku}`;
    const stored = inventory.lines.map((line) => ({ line: key(line), qty: line.qty, parts: (line.split?.parts ?? [{ batchref: line.batchref, qty: line.qty }]).map(({ batchref, qty }) => ({ batchref, qty })) }));
    const modelled = [...model.lines.values()].map((line) => ({ line: key(line), qty: line.qty, parts: line.parts.map(({ batchref, qty }) => ({ batchref, qty })) }));
    const byLine = <T extends { line: string }>(items: T[]) => items.sort((a, b) => (a.line < b.line ? -1 : 1));
    expect(byLine(stored)).toEqual(byLine(modelled));
    expect(findViolations(inventory)).toEqual([]);
  };

  it('answers every request of any sequence as the model does, and ends holding what the model holds', async () => {
    await fc.assert(
      fc.asyncProperty(sequence, async (requests) => {
        await check(requests);
      }),
      { seed: SEED, numRuns: NUM_RUNS, examples: [[PART_OVER_SEVERAL_BATCHES]] },
    );
    const kinds = ['out_of_stock', 'split_otherwise', 'a line in parts', 'a split line whole', 'a move', 'a part over several batches', 'a line out of its order'];
    expect(kinds.filter((kind) => !met.has(kind)), JSON.stringify(Object.fromEntries(met))).toEqual([]);
  }, 240_000);
});
