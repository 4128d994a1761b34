import { describe, expect, it } from 'vitest';
import type { Adjustment } from '../../domain/adjustments';
import { domainEvent } from '../../domain/events';
import type { Batch } from '../../domain/model';
import type { Inventory } from '../../tools/invariants';
import { judgeAdjustments } from '../../tools/simulate/adjustments-judge';
import { judgeEvents } from '../../tools/simulate/events-judge';
import { judgeFields } from '../../tools/simulate/fields-judge';
import { judge } from '../../tools/simulate/judge';
import { keptRuns } from '../../tools/simulate/kept-runs';
import { memoryStoreOfRecord } from '../../tools/simulate/memory-store';
import { type Moment, judgeAgainstModel } from '../../tools/simulate/model-judge';
import { type Answer, type Reached, runPlan } from '../../tools/simulate/simulation';
import { storyOf } from '../../tools/simulate/story';
import type { Send } from '../../tools/simulate/workload';

/*
 * The simulator's judge on runs written by hand: each rule finds the failure it is for, and passes
 * the same run told the way the contract allows.
 */

const inventory = (parts: Partial<Inventory> = {}): Inventory => ({
  batches: [],
  heldUnits: [],
  batchesOutOfPlace: [],
  knownSkus: [],
  listedAt: [],
  references: [],
  lines: [],
  holds: [],
  unrecognized: [],
  strayPieces: [],
  linesListedUnread: [],
  partsAstray: [],
  locations: [],
  storedLocations: [],
  transfers: [],
  shipments: [],
  stockChanges: [],
  ...parts,
});

const http = (id: number, routeKey: string, parts: { path?: Record<string, string>; body?: unknown } = {}): Send => ({ kind: 'http', id, at: 0, routeKey, ...parts });

const answered = (actor: string, send: Send, sentAt: number, answeredAt: number, status: number, body = ''): Answer => ({
  actor,
  send,
  attempt: 1,
  sentAt,
  sentTime: sentAt,
  answeredAt,
  status,
  body,
  faultsAt: [],
});

const batch = (ref: string, available: number, eta: string | null = null): Batch => ({ ref, sku: 'LAMP', qty: 10, available, eta });

/** A moment of a run's clock as the service writes it: the judges' runs by hand start at 0. */
const time = (ms: number) => new Date(ms).toISOString();

/**
 * A batch of 10 whose line shipped 3 at 2 ms, then counted as of 1 ms (9 on the shelf) by `k1`,
 * written at step 5 and left at `after`: as of its time, the 3 that left since come off, 6.
 */
const countedRun = (after: number) => {
  const received = { ref: 'b1', sku: 'LAMP', kind: 'added' as const, delta: 10, qtyAfter: 10, reason: 'received' as const, at: time(0), actor: 'anonymous' };
  const shipped = { ref: 'b1', sku: 'LAMP', kind: 'shipped' as const, delta: -3, qtyAfter: 7, reason: 'shipped' as const, reference: 'parcel1', at: time(2), actor: 'anonymous' };
  const counted = { ref: 'b1', sku: 'LAMP', kind: 'adjusted' as const, delta: after - 7, qtyAfter: after, reason: 'counted' as const, reference: 'k1', at: time(1), actor: 'anonymous' };
  const timeline: Moment[] = [
    { step: -1, at: 0, inventory: inventory({ batches: [{ ...batch('b1', 10), qty: 10 }], stockChanges: [received] }) },
    { step: 2, at: 2, inventory: inventory({ batches: [{ ...batch('b1', 7), qty: 7 }], stockChanges: [received, shipped] }) },
    { step: 5, at: 5, inventory: inventory({ batches: [{ ...batch('b1', after), qty: after }], stockChanges: [received, shipped, ...(after === 7 ? [] : [counted])] }) },
  ];
  const count = http(2, 'POST /adjustments', { body: { adjustmentid: 'k1', ref: 'b1', reason: 'counted', qty: 9, counted_at: time(1) } });
  const stored: Adjustment = { adjustmentid: 'k1', ref: 'b1', reason: 'counted', qty: 9, countedAt: time(1), before: 7, after, adjustedAt: time(4) };
  const reached: Reached[] = [
    { step: 2, actor: 'r1', items: ['SKU#LAMP STOCK#b1', 'BATCHREF#b1 BATCHREF', 'SHIPMENT#parcel1 SHIPMENT'], committed: true, checks: 0 },
    { step: 5, actor: 'r2', items: ['BATCHREF#b1 BATCHREF', 'SKU#LAMP STOCK#b1', 'ADJUSTMENT#k1 ADJUSTMENT'], committed: true, checks: 0 },
  ];
  const body = JSON.stringify({ adjustmentid: 'k1', ref: 'b1', reason: 'counted', before: 7, after, reallocated: [] });
  return { timeline, count, stored, reached, body };
};

const transfer = { transferid: 't1', sku: 'LAMP', qty: 1, from: 'default', to: 'north', eta: '2027-05-01', fromBatchref: 'b1' };

describe("the simulator's judge", () => {
  it("excuses a 503 in a shared process whose locations, read once for the requests that found them stale, met a fault, and no other", () => {
    const allocate = answered('r2', http(2, 'POST /allocate', { body: { orderid: 'o1', sku: 'LAMP', qty: 1 } }), 0, 4, 503);
    const rules = (items: string[], mode: 'shared' | 'lambda') =>
      judge({ answers: [allocate], reached: [{ step: 1, actor: 'r2', items: ['SKU#LAMP'], committed: false, checks: 0 }], faultsMet: [{ step: 2, actor: 'r1', items }], inventory: inventory(), mode }).map(({ rule }) => rule);
    expect(rules(['LOCATIONS'], 'shared')).toEqual([]);
    expect(rules(['LOCATIONS'], 'lambda')).toEqual(['no-5xx-without-a-fault']);
    expect(rules(['SKU#OTHER'], 'shared')).toEqual(['no-5xx-without-a-fault']);
  });

  it('fails a repeat of a cancel answered 409 after the same cancel committed, and passes one that came first', () => {
    const cancel = http(1, 'DELETE /transfers/{transferid}', { path: { transferid: 't1' } });
    const stored = inventory({ transfers: [{ ...transfer, status: 'cancelled' }] });
    const first = answered('r1', cancel, 0, 4, 204);
    const repeat = answered('r2', cancel, 1, 6, 409, '{"message":"changed"}');
    const writes = (repeatAt: number): Reached[] => [
      { step: 3, actor: 'r1', items: ['TRANSFER#t1 TRANSFER'], committed: true, checks: 0 },
      { step: repeatAt, actor: 'r2', items: ['TRANSFER#t1 TRANSFER'], committed: false, checks: 0 },
    ];
    const rules = (reached: Reached[]) => judge({ answers: [first, repeat], reached, faultsMet: [], inventory: stored, mode: 'lambda' }).map(({ rule }) => rule);
    expect(rules(writes(5))).toEqual(['repeat-answered-as-repeat']);
    expect(rules(writes(2))).toEqual([]);
  });

  it('fails a PATCH that ended a hold in a write without its change, unless the run placed more holds than that write carries', () => {
    const change = answered('r2', http(2, 'PATCH /batches/{ref}', { path: { ref: 'b1' }, body: { qty: 0 } }), 0, 9, 200);
    const line = { sku: 'LAMP', qty: 1, batchref: 'b1' };
    const placed = (count: number) =>
      Array.from({ length: count }, (_, index) =>
        answered(`h${index}`, http(10 + index, 'POST /holds', { body: { holdid: `hold${index}`, lines: [{ sku: 'LAMP', qty: 1 }], ttl_seconds: 60 } }), 0, 1, 201, JSON.stringify({ holdid: `hold${index}`, lines: [line] })),
      );
    const stored = (count: number) =>
      inventory({ holds: Array.from({ length: count }, (_, index) => ({ holdid: `hold${index}`, lines: [line], status: 'released' as const, expiresAt: '2026-06-01T00:01:00.000Z' })) });
    const endedBy = (items: string[]): Reached => ({ step: 3, actor: 'r2', items, committed: true, checks: 0 });
    const rules = (holds: number, reached: Reached[]) => judge({ answers: [...placed(holds), change], reached, faultsMet: [], inventory: stored(holds), mode: 'lambda' }).map(({ rule }) => rule);
    const apart = endedBy(['HOLD#hold0 HOLD', 'SKU#LAMP HELD#b1']);
    const together = endedBy(['BATCHREF#b1 BATCHREF', 'SKU#LAMP STOCK#b1', 'HOLD#hold0 HOLD', 'SKU#LAMP HELD#b1']);
    expect(rules(2, [apart])).toEqual(['holds-end-with-their-change']);
    expect(rules(2, [together])).toEqual([]);
    expect(rules(40, [apart])).toEqual([]);
  });

  it("fails a hold placed whose stored lines or parts are not the ones its answer named", () => {
    const place = http(1, 'POST /holds', { body: { holdid: 'cart', split: 'batches', lines: [{ sku: 'LAMP', qty: 5 }] } });
    const answer = JSON.stringify({ holdid: 'cart', lines: [{ sku: 'LAMP', qty: 5, parts: [{ batchref: 'b1', qty: 3 }, { batchref: 'b2', qty: 2 }] }] });
    const hold = (parts: { batchref: string; qty: number }[]) => ({ holdid: 'cart', lines: parts.map((part) => ({ sku: 'LAMP', ...part, split: 'batches' as const })), status: 'active' as const, expiresAt: '2026-06-01T00:15:00.000Z' });
    const rules = (holds: Inventory['holds']) => judge({ answers: [answered('r1', place, 0, 3, 201, answer)], reached: [], faultsMet: [], inventory: inventory({ holds }), mode: 'lambda' }).map(({ rule }) => rule);
    expect(rules([hold([{ batchref: 'b1', qty: 3 }, { batchref: 'b2', qty: 2 }])])).toEqual([]);
    expect(rules([hold([{ batchref: 'b1', qty: 5 }])])).toEqual(['answer-holds']);
    expect(rules([])).toEqual(['answer-holds']);
  });

  it('never excuses a 500, and excuses a 503 only where a fault met the request', () => {
    const read = http(1, 'GET /batches/{ref}', { path: { ref: 'b1' } });
    const rules = (answer: Answer) => judge({ answers: [answer], reached: [], faultsMet: [], inventory: inventory(), mode: 'lambda' }).map(({ rule }) => rule);
    expect(rules({ ...answered('r1', read, 0, 2, 500), faultsAt: [1] })).toEqual(['no-5xx-without-a-fault']);
    expect(rules(answered('r1', read, 0, 2, 503))).toEqual(['no-5xx-without-a-fault']);
    expect(rules({ ...answered('r1', read, 0, 2, 503), faultsAt: [1] })).toEqual([]);
  });

  it('fails a line stored for a request that was refused', () => {
    const allocate = http(1, 'POST /allocate', { body: { orderid: 'o1', sku: 'LAMP', qty: 1 } });
    const stored = inventory({ lines: [{ orderid: 'o1', sku: 'LAMP', qty: 1, batchref: 'b1' }], batches: [batch('b1', 9)] });
    const rules = (status: number) => judge({ answers: [answered('r1', allocate, 0, 3, status, '{"batchref":"b1"}')], reached: [], faultsMet: [], inventory: stored, mode: 'lambda' }).map(({ rule }) => rule);
    expect(rules(400)).toEqual(['line-has-an-author']);
    expect(rules(201)).toEqual([]);
  });

  it('fails events that allocate a line twice, or end where the table does not', () => {
    const allocated = (id: string, batchref: string) => domainEvent('Allocated', { id, time: '2026-06-01T00:00:00.000Z', orderid: 'o1', sku: 'LAMP', qty: 1, batchref, location: 'default' });
    const stored = inventory({ lines: [{ orderid: 'o1', sku: 'LAMP', qty: 1, batchref: 'b1' }] });
    expect(judgeEvents([allocated('e1', 'b1')], stored)).toEqual([]);
    expect(judgeEvents([allocated('e1', 'b1'), allocated('e2', 'b2')], stored).map(({ rule }) => rule)).toContain('events-agree');
    expect(judgeEvents([], stored).map(({ rule }) => rule)).toEqual(['events-agree']);
  });

  it('fails a refusal while a batch had room at every moment of its request, and passes one with a moment without', () => {
    const allocate = http(1, 'POST /allocate', { body: { orderid: 'o1', sku: 'LAMP', qty: 2 } });
    const refusal = answered('r1', allocate, 1, 5, 400, '{"message":"Out of stock for sku LAMP","reason":"out_of_stock"}');
    const moment = (step: number, available: number) => ({ step, at: step, inventory: inventory({ batches: [batch('b1', available)] }) });
    expect(judgeAgainstModel([refusal], [], [moment(-1, 5), moment(3, 4)]).map(({ rule }) => rule)).toEqual(['refusal-was-true']);
    expect(judgeAgainstModel([refusal], [], [moment(-1, 5), moment(3, 1)])).toEqual([]);
  });

  it('fails a read of a hold that answers it active after its release committed, and passes one that answers it released', () => {
    const line = { sku: 'LAMP', qty: 1, batchref: 'b1' };
    const hold = (status: 'active' | 'released') => ({ holdid: 'cart', lines: [line], status, expiresAt: '2026-06-01T00:15:00.000Z' });
    const timeline = [
      { step: -1, at: 0, inventory: inventory({ batches: [batch('b1', 9)], holds: [hold('active')] }) },
      { step: 3, at: 3, inventory: inventory({ batches: [batch('b1', 10)], holds: [hold('released')] }) },
    ];
    const read = http(2, 'GET /holds/{holdid}', { path: { holdid: 'cart' } });
    const answer = (status: string) => JSON.stringify({ holdid: 'cart', status, expires_at: '2026-06-01T00:15:00.000Z', lines: [{ ...line, location: 'default' }] });
    const rules = (status: string) => judgeFields([answered('r2', read, 5, 7, 200, answer(status))], [], timeline).map(({ rule }) => rule);
    expect(rules('active')).toEqual(['read-was-true']);
    expect(rules('released')).toEqual([]);
  });

  it('fails a new line answered 200, as a repeat is, and passes it answered 201, or a repeat of a line another request made answered 200', () => {
    const allocate = http(1, 'POST /allocate', { body: { orderid: 'o1', sku: 'LAMP', qty: 1 } });
    const timeline = [
      { step: -1, at: 0, inventory: inventory({ batches: [batch('b1', 10)] }) },
      { step: 2, at: 2, inventory: inventory({ batches: [batch('b1', 9)], lines: [{ orderid: 'o1', sku: 'LAMP', qty: 1, batchref: 'b1' }] }) },
    ];
    const madeBy = (actor: string): Reached[] => [{ step: 2, actor, items: ['SKU#LAMP STOCK#b1', 'ORDER#o1 LINE#LAMP'], committed: true, checks: 0 }];
    const place = '{"batchref":"b1","location":"default"}';
    const rules = (answers: Answer[], reached: Reached[]) => judgeFields(answers, reached, timeline).map(({ rule }) => rule);
    expect(rules([answered('r1', allocate, 0, 3, 200, place)], madeBy('r1'))).toEqual(['created-answers-201', 'created-answers-201']);
    expect(rules([answered('r1', allocate, 0, 3, 201, place)], madeBy('r1'))).toEqual([]);
    expect(rules([answered('r1', allocate, 0, 3, 201, place), answered('r2', allocate, 1, 5, 200, place)], madeBy('r1'))).toEqual([]);
  });

  it("passes a confirm answered 200 after a commit of it whose answer was lost, though the hold's placing was never answered either, and fails one answered 200 that only it or nothing wrote", () => {
    const place = http(1, 'POST /holds', { body: { holdid: 'cart', lines: [{ sku: 'LAMP', qty: 1 }], ttl_seconds: 900 } });
    const confirm = http(2, 'POST /holds/{holdid}/confirm', { path: { holdid: 'cart' }, body: { orderid: 'o1' } });
    const lost = (actor: string, send: Send, sentAt: number, attempt = 1): Answer => ({ actor, send, attempt, sentAt, sentTime: sentAt, died: true, faultsAt: [] });
    const timeline = [
      { step: -1, at: 0, inventory: inventory({ batches: [batch('b1', 10)] }) },
      { step: 1, at: 1, inventory: inventory({ batches: [batch('b1', 9)] }) },
      { step: 4, at: 4, inventory: inventory({ batches: [batch('b1', 9)], lines: [{ orderid: 'o1', sku: 'LAMP', qty: 1, batchref: 'b1' }] }) },
    ];
    const placedBy = (actor: string): Reached => ({ step: 1, actor, items: ['SKU#LAMP STOCK#b1', 'HOLD#cart HOLD'], committed: true, checks: 0 });
    const confirmedBy = (actor: string): Reached => ({ step: 4, actor, items: ['HOLD#cart HOLD', 'ORDER#o1 LINE#LAMP', 'SKU#LAMP STOCK#b1'], committed: true, checks: 0 });
    const lines = JSON.stringify({ orderid: 'o1', lines: [{ sku: 'LAMP', qty: 1, batchref: 'b1', location: 'default' }] });
    const retry = { ...answered('r2.2', confirm, 6, 8, 200, lines), attempt: 2 };
    const rules = (answers: Answer[], reached: Reached[]) => judgeFields(answers, reached, timeline).map(({ rule }) => rule);
    expect(rules([lost('r1', place, 0), lost('r2', confirm, 3), retry], [placedBy('r1'), confirmedBy('r2')])).toEqual([]);
    expect(rules([lost('r1', place, 0), answered('r3', confirm, 3, 5, 201, lines), answered('r2', confirm, 3, 8, 200, lines)], [placedBy('r1'), confirmedBy('r3')])).toEqual([]);
    expect(rules([lost('r1', place, 0), answered('r2', confirm, 3, 5, 200, lines)], [placedBy('r1'), confirmedBy('r2')])).toEqual(['created-answers-201', 'created-answers-201']);
    expect(rules([lost('r1', place, 0), lost('r2', confirm, 3), retry], [placedBy('r1')])).toEqual(['created-answers-201']);
  });

  it('fails a line answered at another location than its batch is at, and passes it answered where the batch is', () => {
    const allocate = http(1, 'POST /allocate', { body: { orderid: 'o1', sku: 'LAMP', qty: 1 } });
    const north = { ...batch('b1', 9), location: 'north' };
    const timeline = [
      { step: -1, at: 0, inventory: inventory({ batches: [{ ...north, available: 10 }] }) },
      { step: 2, at: 2, inventory: inventory({ batches: [north], lines: [{ orderid: 'o1', sku: 'LAMP', qty: 1, batchref: 'b1' }] }) },
    ];
    const reached: Reached[] = [{ step: 2, actor: 'r1', items: ['SKU#LAMP STOCK#b1', 'ORDER#o1 LINE#LAMP'], committed: true, checks: 0 }];
    const rules = (location: string) => judgeFields([answered('r1', allocate, 0, 3, 201, JSON.stringify({ batchref: 'b1', location }))], reached, timeline).map(({ rule }) => rule);
    expect(rules('default')).toEqual(['location-as-stored']);
    expect(rules('north')).toEqual([]);
  });

  it('fails a shipment that took units from a batch whose qty had none of them, and passes one from a batch that had them', () => {
    const ship = http(1, 'POST /shipments', { body: { shipmentid: 'parcel1', orderid: 'o1', lines: [{ sku: 'LAMP', qty: 2 }] } });
    const shipment = { shipmentid: 'parcel1', orderid: 'o1', location: 'default', shippedAt: '2026-06-01T00:00:00.002Z', lines: [{ sku: 'LAMP', qty: 2, parts: [{ batchref: 'b1', qty: 2 }] }] };
    const body = JSON.stringify({ shipmentid: 'parcel1', orderid: 'o1', location: 'default', shipped_at: shipment.shippedAt, lines: shipment.lines });
    const timelineFrom = (qty: number) => [
      { step: -1, at: 0, inventory: inventory({ batches: [{ ...batch('b1', 0), qty }], lines: [{ orderid: 'o1', sku: 'LAMP', qty: 3, batchref: 'b1' }] }) },
      {
        step: 2,
        at: 2,
        inventory: inventory({
          batches: [{ ...batch('b1', 0), qty: qty - 2 }],
          lines: [{ orderid: 'o1', sku: 'LAMP', qty: 1, batchref: 'b1', shipped: [{ batchref: 'b1', qty: 2, location: 'default' }] }],
          shipments: [shipment],
        }),
      },
    ];
    const reached: Reached[] = [{ step: 2, actor: 'r1', items: ['ORDER#o1 LINE#LAMP', 'SKU#LAMP STOCK#b1', 'BATCHREF#b1 BATCHREF', 'SHIPMENT#parcel1 SHIPMENT'], committed: true, checks: 0 }];
    const rules = (qty: number) => judgeFields([answered('r1', ship, 0, 3, 201, body)], reached, timelineFrom(qty)).map(({ rule }) => rule);
    expect(rules(0)).toEqual(['shipped-once']);
    expect(rules(3)).toEqual([]);
  });

  it("fails a shipment refused as too few unshipped while its line had the units throughout, and passes one refused at a moment it had fewer", () => {
    const ship = http(1, 'POST /shipments', { body: { shipmentid: 'parcel1', orderid: 'o1', lines: [{ sku: 'LAMP', qty: 2 }] } });
    const refusal = (unshipped: number) => JSON.stringify({ code: 'too_few_unshipped', location: 'default', lines: [{ sku: 'LAMP', qty: 2, unshipped }] });
    const moment = (step: number, qty: number) => ({ step, at: step, inventory: inventory({ batches: [batch('b1', 5)], lines: [{ orderid: 'o1', sku: 'LAMP', qty, batchref: 'b1' }] }) });
    const rules = (unshipped: number, timeline: ReturnType<typeof moment>[]) => judgeFields([answered('r1', ship, 1, 5, 409, refusal(unshipped))], [], timeline).map(({ rule }) => rule);
    expect(rules(1, [moment(-1, 3), moment(3, 3)])).toEqual(['refusal-was-true']);
    expect(rules(1, [moment(-1, 3), moment(3, 1)])).toEqual([]);
  });

  it('follows units shipped off a line in its events, and fails a shipment of units its events never gave the line', () => {
    const allocated = domainEvent('Allocated', { id: 'e1', time: '2026-06-01T00:00:00.000Z', orderid: 'o1', sku: 'LAMP', qty: 3, batchref: 'b1', location: 'default' });
    const shipped = (id: string, qty: number) =>
      domainEvent('Shipped', { id, time: '2026-06-01T00:00:01.000Z', shipmentid: 'parcel1', orderid: 'o1', location: 'default', lines: [{ sku: 'LAMP', qty, parts: [{ batchref: 'b1', qty }] }] });
    const stored = inventory({ lines: [{ orderid: 'o1', sku: 'LAMP', qty: 1, batchref: 'b1', shipped: [{ batchref: 'b1', qty: 2, location: 'default' }] }] });
    expect(judgeEvents([allocated, shipped('e2', 2)], stored)).toEqual([]);
    expect(judgeEvents([allocated, shipped('e2', 2), shipped('e3', 2)], stored).map(({ rule }) => rule)).toContain('events-agree');
  });

  it("holds a split line's answer to its parts with the units shipped since counted in", () => {
    const allocate = http(1, 'POST /allocate', { body: { orderid: 'o1', sku: 'LAMP', qty: 5, split: 'batches' } });
    const answer = JSON.stringify({ parts: [{ batchref: 'b1', location: 'default', qty: 3 }, { batchref: 'b2', location: 'default', qty: 2 }] });
    const line = (shipped: number) => ({
      orderid: 'o1',
      sku: 'LAMP',
      qty: 5 - shipped,
      batchref: 'b1',
      split: { split: 'batches' as const, parts: [{ batchref: 'b1', qty: 3 - shipped, location: 'default' }, { batchref: 'b2', qty: 2, location: 'default' }] },
      ...(shipped > 0 ? { shipped: [{ batchref: 'b1', qty: shipped, location: 'default' }] } : {}),
    });
    const rules = (stored: Inventory['lines'][number]) =>
      judge({ answers: [answered('r1', allocate, 0, 3, 201, answer)], reached: [], faultsMet: [], inventory: inventory({ lines: [stored] }), mode: 'lambda' }).map(({ rule }) => rule);
    expect(rules(line(1))).toEqual([]);
    expect(rules({ ...line(1), shipped: undefined })).toEqual(['answer-holds']);
  });

  it('passes a cancel whose line stays as what it shipped, holding none, and fails one whose line still holds units', () => {
    const cancel = answered('r1', http(1, 'DELETE /allocations/{orderid}/{sku}', { path: { orderid: 'o1', sku: 'LAMP' } }), 0, 3, 204);
    const line = (qty: number) => ({ orderid: 'o1', sku: 'LAMP', qty, batchref: 'b1', shipped: [{ batchref: 'b1', qty: 1, location: 'default' }], cancelled: true as const });
    // The line's own allocation is not in this run: only what the judge says of the cancel counts here.
    const rules = (stored: Inventory['lines'][number]) =>
      judge({ answers: [cancel], reached: [], faultsMet: [], inventory: inventory({ lines: [stored] }), mode: 'lambda' })
        .map(({ rule }) => rule)
        .filter((rule) => rule === 'answer-holds');
    expect(rules(line(0))).toEqual([]);
    expect(rules(line(1))).toEqual(['answer-holds']);
  });

  it('fails a shipment answered with other fields than the one stored under its id, and passes it answered as stored', () => {
    const read = http(1, 'GET /shipments/{shipmentid}', { path: { shipmentid: 'parcel1' } });
    const shipment = { shipmentid: 'parcel1', orderid: 'o1', location: 'default', shippedAt: '2026-06-01T00:00:00.002Z', lines: [{ sku: 'LAMP', qty: 2, parts: [{ batchref: 'b1', qty: 2 }] }] };
    const timeline = [{ step: -1, at: 0, inventory: inventory({ shipments: [shipment] }) }];
    const body = (shippedAt: string) => JSON.stringify({ shipmentid: 'parcel1', orderid: 'o1', location: 'default', shipped_at: shippedAt, lines: shipment.lines });
    const rules = (shippedAt: string) => judgeFields([answered('r1', read, 0, 2, 200, body(shippedAt))], [], timeline).map(({ rule }) => rule);
    expect(rules('2026-06-01T00:00:09.000Z')).toEqual(['shipment-as-stored']);
    expect(rules(shipment.shippedAt)).toEqual([]);
  });

  it('fails a count that overwrote the changes recorded since its moment, and passes one that applied them on top', () => {
    const rules = (after: number) => {
      const { timeline, count, stored, reached, body } = countedRun(after);
      return judgeAdjustments([answered('r2', count, 3, 6, 201, body)], reached, timeline, [stored]).map(({ rule }) => rule);
    };
    expect(rules(9)).toEqual(['count-as-of-its-time']);
    expect(rules(6)).toEqual([]);
  });

  it('fails a change committed after a count that is recorded at or before its moment', () => {
    const { timeline, count, stored, reached, body } = countedRun(6);
    const late = { ref: 'b1', sku: 'LAMP', kind: 'adjusted' as const, delta: -1, qtyAfter: 5, reason: 'lost' as const, reference: 'a1', at: time(1), actor: 'anonymous' };
    const last = timeline[2] as Moment;
    const after: Moment = { step: 7, at: 7, inventory: inventory({ batches: [{ ...batch('b1', 5), qty: 5 }], stockChanges: [...last.inventory.stockChanges, late] }) };
    const lost: Adjustment = { adjustmentid: 'a1', ref: 'b1', reason: 'lost', delta: -1, before: 6, after: 5, adjustedAt: time(1) };
    const loss = answered('r3', http(3, 'POST /adjustments', { body: { adjustmentid: 'a1', ref: 'b1', reason: 'lost', delta: -1 } }), 1, 8, 201, JSON.stringify({ adjustmentid: 'a1', ref: 'b1', reason: 'lost', before: 6, after: 5, reallocated: [] }));
    const writes: Reached[] = [...reached, { step: 7, actor: 'r3', items: ['BATCHREF#b1 BATCHREF', 'ADJUSTMENT#a1 ADJUSTMENT'], committed: true, checks: 0 }];
    const rules = judgeAdjustments([answered('r2', count, 3, 6, 201, body), loss], writes, [...timeline, after], [stored, lost]).map(({ rule }) => rule);
    expect(rules).toEqual(['change-after-count']);
  });

  it('passes a stale_count only once a count taken after its moment was applied to the batch', () => {
    // k1 counts 7 as of `countedAt`: none of the shipment comes off past 2 ms, all of it before.
    const rules = (countedAt: number) => {
      const { timeline, reached } = countedRun(7);
      const stored: Adjustment = { adjustmentid: 'k1', ref: 'b1', reason: 'counted', qty: countedAt < 2 ? 10 : 7, countedAt: time(countedAt), before: 7, after: 7, adjustedAt: time(4) };
      const first = answered('r2', http(2, 'POST /adjustments', { body: { adjustmentid: 'k1', ref: 'b1', reason: 'counted', qty: stored.qty, counted_at: time(countedAt) } }), 3, 6, 201, JSON.stringify({ adjustmentid: 'k1', ref: 'b1', reason: 'counted', before: 7, after: 7, reallocated: [] }));
      const older = answered('r3', http(3, 'POST /adjustments', { body: { adjustmentid: 'k2', ref: 'b1', reason: 'counted', qty: 4, counted_at: time(1) } }), 6, 8, 409, JSON.stringify({ message: 'stale', code: 'stale_count' }));
      return judgeAdjustments([first, older], reached, timeline, [stored]).map(({ rule }) => rule);
    };
    expect(rules(3)).toEqual([]);
    expect(rules(1)).toEqual(['refusal-was-true']);
    expect(rules(0)).toEqual(['refusal-was-true']);
  });

  it("passes a count's retry answered as a repeat when its first attempt committed and lost its answer, and fails it answered 201", () => {
    const { timeline, count, stored, reached, body } = countedRun(6);
    const first: Answer = { ...answered('r2', count, 3, 6, 503, '{"message":"unavailable"}'), faultsAt: [5] };
    const retry = (status: number): Answer => ({ ...answered('r2.2', count, 8, 10, status, body), attempt: 2 });
    const rules = (answers: Answer[]) => judgeAdjustments(answers, reached, timeline, [stored]).map(({ rule }) => rule);
    expect(rules([first, retry(200)])).toEqual([]);
    expect(rules([first, retry(201)])).toEqual(['adjustment-answered-as-stored']);
    // One that got the answer of its own commit answers 201, never as a repeat.
    expect(rules([answered('r2', count, 3, 6, 200, body)])).toEqual(['adjustment-has-an-author', 'adjustment-answered-as-stored']);
  });

  it('fails a copy of an adjustment refused on the qty its first send set, after it read what that send wrote', () => {
    const take = http(1, 'POST /adjustments', { body: { adjustmentid: 'a1', ref: 'b1', reason: 'lost', delta: -1, expected_qty: 10 } });
    const timeline: Moment[] = [
      { step: -1, at: 0, inventory: inventory({ batches: [{ ...batch('b1', 10), qty: 10 }] }) },
      { step: 3, at: 3, inventory: inventory({ batches: [{ ...batch('b1', 9), qty: 9 }], stockChanges: [{ ref: 'b1', sku: 'LAMP', kind: 'adjusted', delta: -1, qtyAfter: 9, reason: 'lost', reference: 'a1', at: time(2), actor: 'anonymous' }] }) },
    ];
    const stored: Adjustment = { adjustmentid: 'a1', ref: 'b1', reason: 'lost', delta: -1, expectedQty: 10, before: 10, after: 9, adjustedAt: time(1) };
    const first = answered('r1', take, 0, 4, 201, JSON.stringify({ adjustmentid: 'a1', ref: 'b1', reason: 'lost', before: 10, after: 9, reallocated: [] }));
    const copy = answered('r2', take, 1, 6, 409, JSON.stringify({ message: 'changed', code: 'qty_changed', qty: 9 }));
    const rules = (readAt: number) => {
      const reached: Reached[] = [
        { step: readAt, actor: 'r2', items: ['SKU#LAMP STOCK#b1'], committed: false, checks: 0 },
        { step: 3, actor: 'r1', items: ['BATCHREF#b1 BATCHREF', 'SKU#LAMP STOCK#b1', 'ADJUSTMENT#a1 ADJUSTMENT'], committed: true, checks: 0 },
      ];
      return judgeAdjustments([first, copy], reached, timeline, [stored]).map(({ rule }) => rule);
    };
    expect(rules(5)).toEqual(['repeat-answered-as-repeat']);
    expect(rules(2)).toEqual([]);
  });

  it.each(keptRuns(new URL('./fixtures/planted-runs', import.meta.url).pathname))('fails the run kept of a planted defect ($file), which passes without it', async ({ plan }) => {
    const store = memoryStoreOfRecord();
    try {
      const rule = (
        {
          'count-ignores-changes-since': 'count-as-of-its-time',
          'count-stale-at-the-same-moment': 'refusal-was-true',
          'count-unguarded-by-its-read': 'count-as-of-its-time',
          'history-page-skips-its-last': 'history-complete',
          'history-qty-after-as-now': 'history-as-recorded',
          'place-count-planned-again': 'import-row-once',
          'promise-ignores-expired-holds': 'promise-is-order',
        } as const
      )[plan.plant ?? 'count-ignores-changes-since'];
      expect(plan.plant).toBeDefined();
      expect((await runPlan(plan, store)).failures.map((failure) => failure.rule)).toContain(rule);
      const { plant: _planted, ...unplanted } = plan;
      const clean = await runPlan(unplanted, store);
      expect(clean.failures, storyOf(clean)).toEqual([]);
    } finally {
      store.destroy();
    }
  });
});
