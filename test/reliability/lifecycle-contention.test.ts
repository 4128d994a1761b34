import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatchChange, NewBatch } from '../../domain/model';
import { type Inventory, readInventory } from '../../tools/invariants';
import { type ModelledTable, createModelledTable } from '../support/conflict-model';
import { seedOr } from './support/seed';
import { type Answer, type LocalService, startLocalService } from './support/service';

const SEED = seedOr(5_2026);

/** One SKU, so that every request below races the others for the same batches. */
const SKU = 'DESK';
const ORDERS = 80;
/** Two batches on the shelf, so that the reference breaks their tie, and two shipments. */
const BATCH_ETAS = [null, null, '2027-03-01', '2027-04-15'] as const;
const REFS = BATCH_ETAS.map((_, index) => `${SKU}-${index + 1}`);
/** Requests are sent in the order of a position drawn in this range. */
const POSITIONS = 260;
/**
 * Clients with a request in flight at every moment, each taking the next request as soon as it has
 * its answer: more than the local server runs at once, so that it always has requests waiting.
 * Sent all at once instead, the requests without a body arrive whole first, and every cancel and read
 * would run before any allocation.
 */
const CLIENTS = 24;
const CHANGES = 24;
const READS = 45;
/** A client gives up on a PATCH that keeps answering 503 after this many attempts: the test then fails, naming it. */
const MAX_CHANGE_ATTEMPTS = 10;
/**
 * Every call goes through the conflict model (local/conflict-model.ts): each write holds its items
 * for 5 ms, so that requests racing for the same batches are cancelled with TransactionConflict as
 * on AWS, and retried by the adapter; past its retries they answer 503.
 */
const CONFLICT_MODEL = { holdMs: 5 };

type Request =
  | { readonly kind: 'allocate'; readonly orderid: string; readonly qty: number }
  | { readonly kind: 'cancel'; readonly orderid: string }
  | { readonly kind: 'change'; readonly ref: string; readonly change: BatchChange }
  | { readonly kind: 'read-order'; readonly orderid: string }
  | { readonly kind: 'read-batch'; readonly ref: string }
  | { readonly kind: 'read-stock' };

type Change = Extract<Request, { kind: 'change' }>;

interface Workload {
  readonly batches: readonly NewBatch[];
  /** In the order they are sent, by CLIENTS clients at once. */
  readonly requests: readonly Request[];
}

const [FIRST, SECOND, THIRD] = REFS as [string, string, string, string];
const lastOrder = (n: number) => `order-${ORDERS + n}`;
/**
 * Sent one at a time after the race, whatever state the race left: it empties every batch, then meets
 * each case that the race meets only as the races fall (a line moved to another batch and one moved
 * off its order, an allocation out of stock, a cancel of a line gone and of a line there, a line left
 * stored), so that the checks below never depend on timing to have something to judge.
 */
const FINAL_PHASE: readonly Request[] = [
  ...REFS.map((ref): Request => ({ kind: 'change', ref, change: { qty: 0, eta: null } })),
  { kind: 'change', ref: FIRST, change: { qty: 10 } },
  { kind: 'change', ref: SECOND, change: { qty: 10 } },
  // Both on the first batch, which the reference prefers over the second.
  { kind: 'allocate', orderid: lastOrder(1), qty: 6 },
  { kind: 'allocate', orderid: lastOrder(2), qty: 3 },
  // Both move to the second batch, which keeps 1 unit.
  { kind: 'change', ref: FIRST, change: { qty: 0 } },
  { kind: 'allocate', orderid: lastOrder(3), qty: 6 },
  // Both leave their orders: no batch has room.
  { kind: 'change', ref: SECOND, change: { qty: 0 } },
  { kind: 'cancel', orderid: lastOrder(1) },
  { kind: 'change', ref: THIRD, change: { qty: 5 } },
  { kind: 'allocate', orderid: lastOrder(4), qty: 2 },
  { kind: 'cancel', orderid: lastOrder(4) },
  { kind: 'allocate', orderid: lastOrder(5), qty: 2 },
  { kind: 'read-order', orderid: lastOrder(5) },
  { kind: 'read-batch', ref: THIRD },
  { kind: 'read-stock' },
];

const at = <T extends Request>(position: number, request: T) => ({ position, request });

const orderRequests = (orderid: string) =>
  fc
    .record({
      position: fc.nat(POSITIONS),
      qty: fc.integer({ min: 1, max: 6 }),
      // A client that timed out sends the line again soon after, now and then with another qty.
      repeats: fc.array(
        fc.record({ after: fc.nat(15), extraQty: fc.oneof({ weight: 7, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 3 })) }),
        { maxLength: 2 },
      ),
      // Soon enough after the line that some race its allocation, or its repeats.
      cancels: fc.oneof(
        { weight: 3, arbitrary: fc.constant<number[]>([]) },
        { weight: 2, arbitrary: fc.array(fc.nat(40), { minLength: 1, maxLength: 2 }) },
      ),
    })
    .map(({ position, qty, repeats, cancels }) => [
      at(position, { kind: 'allocate', orderid, qty }),
      ...repeats.map(({ after, extraQty }) => at(position + after, { kind: 'allocate', orderid, qty: qty + extraQty })),
      ...cancels.map((after) => at(position + after, { kind: 'cancel', orderid })),
    ]);

const ref = fc.constantFrom(...REFS);
const eta = fc.constantFrom(null, '2027-02-01', '2027-05-01');
const change: fc.Arbitrary<BatchChange> = fc.oneof(
  fc.constant({ qty: 0 }),
  fc.record({ qty: fc.integer({ min: 1, max: 12 }) }),
  fc.record({ qty: fc.integer({ min: 40, max: 80 }) }),
  fc.record({ eta }),
  fc.record({ qty: fc.integer({ min: 5, max: 60 }), eta }),
);
const read: fc.Arbitrary<Request> = fc.oneof(
  fc.integer({ min: 1, max: ORDERS }).map((n) => ({ kind: 'read-order', orderid: `order-${n}` }) as const),
  ref.map((ref) => ({ kind: 'read-batch', ref }) as const),
  fc.constant({ kind: 'read-stock' } as const),
);

const workloadArbitrary: fc.Arbitrary<Workload> = fc
  .record({
    batchQtys: fc.tuple(...BATCH_ETAS.map(() => fc.integer({ min: 20, max: 50 }))),
    orders: fc.tuple(...Array.from({ length: ORDERS }, (_, index) => orderRequests(`order-${index + 1}`))),
    changes: fc.array(
      fc.record({ position: fc.nat(POSITIONS), ref, change }).map(({ position, ref, change }) => at(position, { kind: 'change', ref, change })),
      { minLength: CHANGES, maxLength: CHANGES },
    ),
    reads: fc.array(fc.record({ position: fc.nat(POSITIONS), read }).map(({ position, read }) => at(position, read)), {
      minLength: READS,
      maxLength: READS,
    }),
  })
  .map(({ batchQtys, orders, changes, reads }) => ({
    batches: BATCH_ETAS.map((eta, index): NewBatch => ({ ref: REFS[index] as string, sku: SKU, qty: batchQtys[index] as number, eta })),
    requests: [...orders.flat(), ...changes, ...reads].sort((a, b) => a.position - b.position).map(({ request }) => request),
  }));

const pathOf = (...segments: string[]) => `/${segments.map(encodeURIComponent).join('/')}`;

const send = (service: LocalService, request: Request): Promise<Answer> => {
  switch (request.kind) {
    case 'allocate':
      return service.allocate({ orderid: request.orderid, sku: SKU, qty: request.qty });
    case 'cancel':
      return service.request('DELETE', pathOf('allocations', request.orderid, SKU));
    case 'change':
      return service.request('PATCH', pathOf('batches', request.ref), request.change);
    case 'read-order':
      return service.request('GET', pathOf('allocations', request.orderid));
    case 'read-batch':
      return service.request('GET', pathOf('batches', request.ref));
    case 'read-stock':
      return service.request('GET', pathOf('skus', SKU, 'stock'));
  }
};

/** As a client does: a PATCH answered 503 is sent again after Retry-After, until it is answered otherwise. */
const sendUntilAnswered = async (service: LocalService, request: Request): Promise<Answer[]> => {
  const attempts = [await send(service, request)];
  let last = attempts[0] as Answer;
  while (request.kind === 'change' && last.status === 503 && attempts.length < MAX_CHANGE_ATTEMPTS) {
    await sleep(Number(last.headers['retry-after']) * 1000);
    last = await send(service, request);
    attempts.push(last);
  }
  return attempts;
};

interface Outcome {
  readonly request: Request;
  readonly attempts: Answer[];
  /** When its first attempt was sent, and its last one answered (performance.now()). */
  readonly sentAt: number;
  readonly answeredAt: number;
}

const sendTimed = async (service: LocalService, request: Request): Promise<Outcome> => {
  const sentAt = performance.now();
  const attempts = await sendUntilAnswered(service, request);
  return { request, attempts, sentAt, answeredAt: performance.now() };
};

/** Every request, in order, by CLIENTS clients at once; each PATCH until it is answered otherwise than 503. */
const sendByClients = async (service: LocalService, requests: readonly Request[]) => {
  const outcomes: Outcome[] = [];
  let next = 0;
  const client = async () => {
    for (let request = requests[next++]; request; request = requests[next++]) {
      outcomes.push(await sendTimed(service, request));
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  return outcomes;
};

interface BatchView {
  ref: string;
  sku: string;
  qty: number;
  allocated: number;
  available: number;
  eta: string | null;
}
interface Reallocation {
  orderid: string;
  sku: string;
  qty: number;
  from: string;
  batchref: string | null;
}
interface StockView {
  sku: string;
  in_stock: number;
  incoming: number;
  next_eta: string | null;
  batches: Array<{ ref: string; qty: number; available: number; eta: string | null }>;
}

const bodyOf = <T>(answer: Answer) => answer.body as T;
/** The qty a 409 says the line already has. */
const qtyAllocatedIn = (answer: Answer): number | undefined => {
  const qty = /^Order .+ already has a line for sku .+ with qty (\d+)$/.exec(String(bodyOf<{ message: string }>(answer).message))?.[1];
  return qty === undefined ? undefined : Number(qty);
};
const isRetryLater = (answer: Answer) =>
  answer.status === 503 &&
  Number(answer.headers['retry-after']) > 0 &&
  JSON.stringify(Object.keys(answer.body as object)) === JSON.stringify(['message', 'requestId']);

/** What the contract lets each route answer while other requests race it, besides a 503 to retry. */
const isAllowed = (request: Request, answer: Answer): boolean => {
  const message = (answer.body as { message?: unknown }).message;
  switch (request.kind) {
    case 'allocate':
      return (
        ((answer.status === 201 || answer.status === 200) && REFS.includes(bodyOf<{ batchref: string }>(answer).batchref)) ||
        (answer.status === 400 && message === `Out of stock for sku ${SKU}`) ||
        (answer.status === 409 && message === `Order ${request.orderid} already has a line for sku ${SKU} with qty ${qtyAllocatedIn(answer)}`)
      );
    case 'cancel':
      return (
        (answer.status === 204 && answer.text === '' && answer.headers['content-type'] === undefined) ||
        (answer.status === 404 && message === `Order ${request.orderid} has no line for sku ${SKU}`)
      );
    case 'change': {
      const { ref, reallocated } = bodyOf<BatchView & { reallocated: Reallocation[] }>(answer);
      return answer.status === 200 && ref === request.ref && reallocated.every((move) => move.from === ref && move.sku === SKU);
    }
    case 'read-order': {
      const { orderid, lines = [] } = bodyOf<{ orderid: string; lines?: Array<{ sku: string; batchref: string }> }>(answer);
      const [line] = lines;
      return (
        (answer.status === 200 && orderid === request.orderid && lines.length === 1 && line?.sku === SKU && REFS.includes(line.batchref)) ||
        (answer.status === 404 && message === `Order ${request.orderid} has no allocations`)
      );
    }
    case 'read-batch': {
      const { ref, sku } = bodyOf<BatchView>(answer);
      return answer.status === 200 && ref === request.ref && sku === SKU;
    }
    case 'read-stock':
      return answer.status === 200 && bodyOf<StockView>(answer).sku === SKU;
  }
};

/** Shelf stock first, then the earliest shipment, then the reference: the order of a stock answer's batches. */
const preferenceKey = ({ eta, ref }: { eta: string | null; ref: string }) => `${eta === null ? '0' : `1${eta}`}\u0000${ref}`;

/**
 * What the answers say happened to one line (orderid, sku), whatever order the requests ran in:
 * each 201 put it on a batch, each reported move took it off one batch and put it on another or
 * off its order, and each 204 took it off whichever batch held it then.
 */
interface LineHistory {
  /** The qty of each 201: one per life of the line, since a cancelled or removed line can be allocated anew. */
  readonly createdQtys: number[];
  /** Per batch, the times an answer put the line on it minus the times one took it off it. */
  readonly balance: Map<string, number>;
  cancels: number;
  /** Its reported places include a batch whose PATCH answered 503: that attempt may have moved it, reported nowhere. */
  nearUnreportedMoves: boolean;
}

describe(`allocations, cancels, batch changes and reads of one SKU from ${CLIENTS} clients at once, over HTTP (seed ${SEED})`, () => {
  const [workload] = fc.sample(workloadArbitrary, { seed: SEED, numRuns: 1 }) as [Workload];
  let table: ModelledTable;
  let outcomes: Outcome[];
  let repeats: Array<{ request: Change; answer: Answer; sentAt: number }>;
  let conflicts: number;
  let check: { code: number; output: string };
  let inventory: Inventory;

  beforeAll(async () => {
    table = await createModelledTable(CONFLICT_MODEL);
    const service = await startLocalService(table.repository());
    try {
      for (const batch of workload.batches) expect((await service.addBatch(batch)).status).toBe(201);
      const before = table.model.counters().conflicts;
      outcomes = await sendByClients(service, workload.requests);
      conflicts = table.model.counters().conflicts - before;
      repeats = [];
      for (const request of workload.requests) {
        if (request.kind === 'change') repeats.push({ request, sentAt: performance.now(), answer: await send(service, request) });
      }
      for (const request of FINAL_PHASE) outcomes.push(await sendTimed(service, request));
    } finally {
      await service.close();
    }
    check = await runCheck(table);
    inventory = await readInventory(table.documentClient, table.tableName);
  }, 60_000);

  afterAll(() => table?.drop());

  const finalAnswers = () => outcomes.map(({ request, attempts, sentAt }) => ({ request, answer: attempts[attempts.length - 1] as Answer, sentAt }));
  const answersTo = <Kind extends Request['kind']>(kind: Kind) =>
    finalAnswers().filter(
      (outcome): outcome is { request: Extract<Request, { kind: Kind }>; answer: Answer; sentAt: number } => outcome.request.kind === kind,
    );
  /** Every move a PATCH reported, with when that PATCH was first sent. */
  const reallocations = () =>
    [...answersTo('change'), ...repeats]
      .filter(({ answer }) => answer.status === 200)
      .flatMap(({ answer, sentAt }) => bodyOf<{ reallocated: Reallocation[] }>(answer).reallocated.map((move) => ({ ...move, sentAt })));

  it('met transaction conflicts in the model: the race was one', () => {
    // Printed when a test of this file fails (or with --silent=false), to judge the race it ran.
    const retried = outcomes.flatMap(({ attempts }) => attempts).filter(({ status }) => status === 503).length;
    const changesCutOff = outcomes.filter(({ request, attempts }) => request.kind === 'change' && attempts.length > 1).length;
    console.info(`conflict model: ${conflicts} requests refused for a conflict during the race; ${retried} answers 503; ${changesCutOff} PATCHes cut off`);
    expect(conflicts).toBeGreaterThan(0);
  });

  it('answers every request as its route may under races: no 5xx but 503 with Retry-After, and every PATCH in the end 200', () => {
    const unexpected = outcomes.flatMap(({ request, attempts }) =>
      attempts.filter((answer) => !(isAllowed(request, answer) || isRetryLater(answer))).map((answer) => ({ request, answer })),
    );
    expect(unexpected).toEqual([]);
    const unfinishedChanges = answersTo('change').filter(({ answer }) => answer.status !== 200);
    expect(unfinishedChanges).toEqual([]);
  });

  it('answers the requests sent one at a time after the race as the rules decide, meeting every case the checks judge', () => {
    const finalAnswers = outcomes.slice(-FINAL_PHASE.length).map(({ attempts }) => attempts[attempts.length - 1] as Answer);
    expect(finalAnswers.map(({ status }) => status)).toEqual([200, 200, 200, 200, 200, 200, 201, 201, 200, 400, 200, 404, 200, 201, 204, 201, 200, 200, 200]);
    const movesOf = (index: number) =>
      bodyOf<{ reallocated: Reallocation[] }>(finalAnswers[index] as Answer)
        .reallocated.map(({ orderid, from, batchref }) => ({ orderid, from, batchref }))
        .sort((a, b) => (a.orderid < b.orderid ? -1 : 1));
    expect(movesOf(8)).toEqual([
      { orderid: lastOrder(1), from: FIRST, batchref: SECOND },
      { orderid: lastOrder(2), from: FIRST, batchref: SECOND },
    ]);
    expect(movesOf(10)).toEqual([
      { orderid: lastOrder(1), from: SECOND, batchref: null },
      { orderid: lastOrder(2), from: SECOND, batchref: null },
    ]);
    const lastOrders = [1, 2, 3, 4, 5].map(lastOrder);
    expect(inventory.lines.filter(({ orderid }) => lastOrders.includes(orderid))).toEqual([
      expect.objectContaining({ orderid: lastOrder(5), batchref: THIRD, qty: 2 }),
    ]);
  });

  it('answers every PATCH sent again after the race with 200 and the batch as it asks, and the table ends as the last ones asked', () => {
    const unlikeTheirChange = repeats.filter(({ request, answer }) => {
      const batch = bodyOf<BatchView>(answer);
      return (
        answer.status !== 200 ||
        batch.qty !== (request.change.qty ?? batch.qty) ||
        batch.eta !== (request.change.eta === undefined ? batch.eta : request.change.eta) ||
        batch.allocated + batch.available !== batch.qty
      );
    });
    expect(unlikeTheirChange).toEqual([]);

    const lastAsked = new Map(workload.batches.map(({ ref, qty, eta }) => [ref, { ref, qty, eta }]));
    const changesSentLast = [...repeats.map(({ request }) => request), ...FINAL_PHASE.filter((request): request is Change => request.kind === 'change')];
    for (const request of changesSentLast) lastAsked.set(request.ref, { ...(lastAsked.get(request.ref) as NewBatch), ...request.change });
    expect(inventory.batches.map(({ ref, qty, eta }) => ({ ref, qty, eta })).sort((a, b) => (a.ref < b.ref ? -1 : 1))).toEqual([
      ...lastAsked.values(),
    ]);
  });

  it('leaves a table in which every invariant holds, as `npm run check` reports', () => {
    expect(check).toEqual({ code: 0, output: expect.stringContaining('every invariant holds') });
  });

  it('stores every line its answers leave allocated, on the batch their reported moves leave it on, and no other line', () => {
    // A PATCH cut off by a 503 may have moved lines off its batch, unreported, from when it was
    // first sent until its last attempt was answered (a second after its last 503 at the earliest).
    // A line put on that batch by a request sent after then was never within its reach.
    const cutOffs = outcomes.flatMap(({ request, attempts, answeredAt }) =>
      request.kind === 'change' && attempts.some((answer) => answer.status === 503) ? [{ ref: request.ref, until: answeredAt }] : [],
    );
    const histories = new Map<string, LineHistory>();
    const historyOf = (orderid: string) => {
      const history = histories.get(orderid) ?? { createdQtys: [], balance: new Map<string, number>(), cancels: 0, nearUnreportedMoves: false };
      histories.set(orderid, history);
      return history;
    };
    /** An answer put the line on the batch, or took it off it, in a request sent at `sentAt`. */
    const put = (history: LineHistory, ref: string, count: number, sentAt: number) => {
      history.balance.set(ref, (history.balance.get(ref) ?? 0) + count);
      if (cutOffs.some((cutOff) => cutOff.ref === ref && sentAt < cutOff.until)) history.nearUnreportedMoves = true;
    };
    // A 503 to an allocation or a cancel counts as nothing written: every store call here answers, so
    // it means a race lost round after round, never the deadline, after which a write may still commit.
    for (const { request, answer, sentAt } of answersTo('allocate')) {
      if (answer.status !== 201) continue;
      const history = historyOf(request.orderid);
      history.createdQtys.push(request.qty);
      put(history, bodyOf<{ batchref: string }>(answer).batchref, 1, sentAt);
    }
    for (const { request, answer } of answersTo('cancel')) if (answer.status === 204) historyOf(request.orderid).cancels++;
    const movedLinesOfOtherQtys = [];
    for (const move of reallocations()) {
      const history = historyOf(move.orderid);
      if (move.sku !== SKU || !history.createdQtys.includes(move.qty)) movedLinesOfOtherQtys.push(move);
      put(history, move.from, -1, move.sentAt);
      if (move.batchref !== null) put(history, move.batchref, 1, move.sentAt);
    }
    expect(movedLinesOfOtherQtys).toEqual([]);

    const stored = new Map(inventory.lines.map((line) => [line.orderid, line]));
    const unaccounted = [];
    for (const orderid of new Set([...histories.keys(), ...stored.keys()])) {
      const history = historyOf(orderid);
      const line = stored.get(orderid);
      // Per batch, what the answers left on it less the line stored there must be what the 204s took
      // off, whatever order it all ran in. A PATCH cut off by a 503 may have moved the line and not
      // said so: then only the count holds, no more lines stored than the answers leave.
      const surplus = REFS.map((ref) => (history.balance.get(ref) ?? 0) - (line?.batchref === ref ? 1 : 0));
      const total = surplus.reduce((sum, count) => sum + count, 0);
      const accounted = history.nearUnreportedMoves
        ? total >= history.cancels
        : surplus.every((count) => count >= 0) && total === history.cancels;
      if (!accounted || (line && !history.createdQtys.includes(line.qty))) {
        unaccounted.push({ orderid, stored: line ?? null, ...history, balance: Object.fromEntries(history.balance) });
      }
    }
    expect(unaccounted).toEqual([]);
    expect(inventory.lines.length).toBeGreaterThan(0);
    const exactly = [...histories.values()].filter((history) => !history.nearUnreportedMoves).length;
    console.info(`lines accounted for exactly: ${exactly} of ${histories.size}; PATCHes cut off: ${cutOffs.length}`);
    // A PATCH that lowers a spread batch below its own units gathers it first, which loses races to
    // the allocations taking from its pieces: 4 to 11 of the 24 PATCHes meet a 503, and 4 to 44 lines
    // are judged exactly (ten runs). The phase after the race judges every case one request at a time.
    expect(exactly).toBeGreaterThan(0);
  });

  it('never reads a line that no allocation created, nor a batch or stock level that does not add up', () => {
    const createdQtys = new Map<string, Set<number>>();
    for (const { request, answer } of answersTo('allocate')) {
      if (answer.status === 201) createdQtys.set(request.orderid, new Set([...(createdQtys.get(request.orderid) ?? []), request.qty]));
    }
    const wasCreated = (orderid: string, qty: number) => createdQtys.get(orderid)?.has(qty) ?? false;

    const linesNeverCreated = [
      ...answersTo('allocate')
        .filter(({ request, answer }) => answer.status === 200 && !wasCreated(request.orderid, request.qty))
        .map(({ request, answer }) => ({ request, answer: answer.body })),
      ...answersTo('allocate')
        .filter(({ request, answer }) => answer.status === 409 && !wasCreated(request.orderid, qtyAllocatedIn(answer) ?? 0))
        .map(({ request, answer }) => ({ request, answer: answer.body })),
      ...answersTo('read-order')
        .filter(({ request, answer }) => {
          const [line] = bodyOf<{ lines: Array<{ qty: number }> }>(answer).lines ?? [];
          return answer.status === 200 && !wasCreated(request.orderid, line?.qty ?? 0);
        })
        .map(({ request, answer }) => ({ request, answer: answer.body })),
    ];
    expect(linesNeverCreated).toEqual([]);

    const changesOf = (ref: string) => [...workload.requests, ...FINAL_PHASE].flatMap((request) => (request.kind === 'change' && request.ref === ref ? [request.change] : []));
    const qtysGiven = (ref: string) => [
      ...workload.batches.filter((batch) => batch.ref === ref).map((batch) => batch.qty),
      ...changesOf(ref).flatMap(({ qty }) => (qty === undefined ? [] : [qty])),
    ];
    const etasGiven = (ref: string) => [
      ...workload.batches.filter((batch) => batch.ref === ref).map((batch) => batch.eta),
      ...changesOf(ref).flatMap(({ eta }) => (eta === undefined ? [] : [eta])),
    ];
    const batchViews = [...answersTo('read-batch'), ...answersTo('change')]
      .filter(({ answer }) => answer.status === 200)
      .map(({ answer }) => bodyOf<BatchView>(answer));
    const unsoundBatches = batchViews.filter(
      (batch) =>
        !qtysGiven(batch.ref).includes(batch.qty) ||
        !etasGiven(batch.ref).includes(batch.eta) ||
        batch.allocated < 0 ||
        batch.available < 0 ||
        // Lines still to move show as allocated above qty, and nothing available.
        (batch.available > 0 ? batch.allocated + batch.available !== batch.qty : batch.allocated < batch.qty),
    );
    expect(unsoundBatches).toEqual([]);

    const stockViews = answersTo('read-stock').filter(({ answer }) => answer.status === 200).map(({ answer }) => bodyOf<StockView>(answer));
    const sum = (batches: StockView['batches']) => batches.reduce((total, batch) => total + batch.available, 0);
    const unsoundStock = stockViews.filter(({ in_stock, incoming, next_eta, batches }) => {
      const shipments = batches.filter((batch) => batch.eta !== null);
      const inPreferenceOrder = [...batches].sort((a, b) => (preferenceKey(a) < preferenceKey(b) ? -1 : 1));
      return (
        JSON.stringify(batches) !== JSON.stringify(inPreferenceOrder) ||
        batches.some((batch) => batch.available <= 0 || batch.available > batch.qty || !qtysGiven(batch.ref).includes(batch.qty)) ||
        in_stock !== sum(batches.filter((batch) => batch.eta === null)) ||
        incoming !== sum(shipments) ||
        next_eta !== (shipments[0]?.eta ?? null)
      );
    });
    expect(unsoundStock).toEqual([]);
    expect(stockViews.length).toBeGreaterThan(0);
    expect(batchViews.length).toBeGreaterThan(0);
  });
});

describe('a batch while allocations and cancels move it out of the stock range and back, through the conflict model', () => {
  /** Each allocation takes the batch's one unit and each cancel gives it back: every one moves the batch across zero. */
  const CROSSINGS = 150;
  const READERS = 8;
  let table: ModelledTable;
  beforeAll(async () => {
    table = await createModelledTable(CONFLICT_MODEL);
  });
  afterAll(() => table?.drop());

  it('is found by every read and every cancel, whichever side of zero its stock is', async () => {
    const service = await startLocalService(table.repository());
    const crossings: Answer[] = [];
    const reads: Answer[] = [];
    try {
      expect((await service.addBatch({ ref: 'lamp-1', sku: 'LAMP', qty: 1, eta: null })).status).toBe(201);
      let crossing = true;
      const crossZero = async () => {
        try {
          while (crossings.length < CROSSINGS) {
            crossings.push(await service.allocate({ orderid: 'order-1', sku: 'LAMP', qty: 1 }));
            crossings.push(await service.request('DELETE', pathOf('allocations', 'order-1', 'LAMP')));
          }
        } finally {
          crossing = false;
        }
      };
      const read = async () => {
        while (crossing) reads.push(await service.request('GET', pathOf('batches', 'lamp-1')));
      };
      await Promise.all([crossZero(), ...Array.from({ length: READERS }, read)]);
    } finally {
      await service.close();
    }
    const answered = (answers: Answer[]) => answers.map(({ status, body }) => ({ status, body }));
    expect(answered(reads).filter(({ status }) => status !== 200)).toEqual([]);
    expect(answered(crossings).filter(({ status }, index) => status !== (index % 2 === 0 ? 201 : 204))).toEqual([]);
    expect(reads.length).toBeGreaterThan(CROSSINGS);
  }, 60_000);
});

const runCheck = async (table: ModelledTable): Promise<{ code: number; output: string }> => {
  try {
    const args = ['run', '--silent', 'check', '--', '--endpoint', table.endpoint, '--table', table.tableName];
    const { stdout } = await promisify(execFile)('npm', args);
    return { code: 0, output: stdout };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, output: stdout + stderr };
  }
};
