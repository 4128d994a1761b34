import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocationDefinition } from '../../domain/locations';
import { type NewBatch, locationOf } from '../../domain/model';
import { type Inventory, findViolations, readInventory } from '../../tools/invariants';
import { type ModelledTable, createModelledTable } from '../support/conflict-model';
import { seedOr } from './support/seed';
import { type Answer, type LocalService, isRetryLater, sendUntilAnswered, startLocalService } from './support/service';

/*
 * Transfers (docs/api.md, "Transfers") raced through the conflict model: a transfer's take races the
 * lines taking from the same batches in stock, and a cancel races the lines routed onto its incoming
 * batch. Whatever wins, every unit is in one batch, once.
 */

const SEED = seedOr(32_2026);

/**
 * Every call goes through the conflict model (local/conflict-model.ts): each write holds its items
 * for 5 ms, so that requests racing for the same batches are cancelled with TransactionConflict as
 * on AWS, and retried by the adapter; past its retries they answer 503, and are sent again.
 */
const CONFLICT_MODEL = { holdMs: 5 };

/** Transfers go from Paris to Lyon; neither serves a destination the requests name. */
const FROM = 'paris';
const TO = 'lyon';
const LOCATIONS: readonly LocationDefinition[] = [
  { id: FROM, name: 'Paris', priority: 1, serves: ['FR'] },
  { id: TO, name: 'Lyon', priority: 2, serves: ['FR'] },
];

const pathOf = (...segments: string[]) => `/${segments.map(encodeURIComponent).join('/')}`;

const addLocationsAndBatches = async (service: LocalService, batches: readonly NewBatch[]) => {
  for (const location of LOCATIONS) expect((await service.request('PUT', pathOf('locations', location.id), location)).status).toBe(201);
  for (const batch of batches) expect((await service.addBatch(batch)).status).toBe(201);
};

const bodyOf = <T>(answer: Answer) => answer.body as T;
const messageOf = (answer: Answer) => bodyOf<{ message?: unknown }>(answer).message;
const lastOf = (attempts: readonly Answer[]) => attempts[attempts.length - 1] as Answer;
const isOutOfStock = (answer: Answer, sku: string) =>
  answer.status === 400 && messageOf(answer) === `Out of stock for sku ${sku}` && bodyOf<{ reason?: unknown }>(answer).reason === 'out_of_stock';
/** Every attempt but the last a 503 with Retry-After: what a client that retries ends with. */
const retriedOnlyAfter503 = (attempts: readonly Answer[]) => attempts.slice(0, -1).every(isRetryLater);
const sumOf = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0);

describe(`allocations and transfers racing for the batches in stock at one location, sent at once through the conflict model (seed ${SEED})`, () => {
  const SKU = 'ARMCHAIR';
  /** Three batches at Paris, so that the takes pass from one to the next as they drain. */
  const REFS = ['armchair-1', 'armchair-2', 'armchair-3'];
  const LINES = 100;
  const TRANSFERS = 10;
  /** Transfers are sent among the first requests, so that some meet stock still there and some do not. */
  const TRANSFER_POSITIONS = 40;
  const POSITIONS = 200;

  interface Line {
    readonly orderid: string;
    readonly qty: number;
    /** Most lines are routed to Paris; the others may take from any place, the transfers' incoming batches at Lyon among them. */
    readonly routedToFrom: boolean;
  }
  interface TransferBody {
    readonly transferid: string;
    readonly sku: string;
    readonly qty: number;
    readonly from: string;
    readonly to: string;
    readonly eta: string;
  }
  type Request = { readonly kind: 'allocate'; readonly line: Line } | { readonly kind: 'transfer'; readonly transfer: TransferBody };
  interface Workload {
    readonly batches: readonly NewBatch[];
    /** In the order they are sent: all at once, each 503 sent again after its Retry-After. */
    readonly requests: readonly Request[];
  }

  const workloadArbitrary: fc.Arbitrary<Workload> = fc
    .record({
      batchQtys: fc.tuple(...REFS.map(() => fc.integer({ min: 40, max: 60 }))),
      lines: fc.tuple(
        ...Array.from({ length: LINES }, (_, index) =>
          fc.record({
            position: fc.nat(POSITIONS),
            line: fc.record({
              orderid: fc.constant(`order-${index + 1}`),
              qty: fc.integer({ min: 1, max: 3 }),
              routedToFrom: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, fc.constant(false)),
            }),
          }),
        ),
      ),
      transfers: fc.tuple(
        ...Array.from({ length: TRANSFERS }, (_, index) =>
          fc.record({
            position: fc.nat(TRANSFER_POSITIONS),
            qty: fc.integer({ min: 3, max: 10 }),
            eta: fc.constantFrom('2027-03-01', '2027-03-15'),
            // A client that timed out sends the transfer again while its first request is in flight.
            copies: fc.constantFrom(1, 1, 2),
            transferid: fc.constant(`transfer-${index + 1}`),
          }),
        ),
      ),
    })
    .map(({ batchQtys, lines, transfers }) => ({
      batches: REFS.map((ref, index): NewBatch => ({ ref, sku: SKU, qty: batchQtys[index] as number, eta: null, location: FROM })),
      requests: [
        ...lines.map(({ position, line }) => ({ position, request: { kind: 'allocate', line } as const })),
        ...transfers.flatMap(({ position, qty, eta, copies, transferid }) =>
          Array.from({ length: copies }, (_, copy) => ({
            position: position + copy,
            request: { kind: 'transfer', transfer: { transferid, sku: SKU, qty, from: FROM, to: TO, eta } } as const,
          })),
        ),
      ]
        .sort((a, b) => a.position - b.position)
        .map(({ request }) => request),
    }));

  const send = (service: LocalService, request: Request) =>
    request.kind === 'allocate'
      ? service.allocate({ orderid: request.line.orderid, sku: SKU, qty: request.line.qty, ...(request.line.routedToFrom ? { location: FROM } : {}) })
      : service.request('POST', '/transfers', request.transfer);

  const [workload] = fc.sample(workloadArbitrary, { seed: SEED, numRuns: 1 }) as [Workload];
  const unitsAdded = sumOf(workload.batches.map(({ qty }) => qty));
  let table: ModelledTable;
  let outcomes: Array<{ request: Request; attempts: Answer[] }>;
  let conflicts: number;
  let inventory: Inventory;

  beforeAll(async () => {
    table = await createModelledTable(CONFLICT_MODEL);
    const service = await startLocalService(table.repository());
    try {
      await addLocationsAndBatches(service, workload.batches);
      const before = table.model.counters().conflicts;
      outcomes = await Promise.all(workload.requests.map(async (request) => ({ request, attempts: await sendUntilAnswered(() => send(service, request)) })));
      conflicts = table.model.counters().conflicts - before;
    } finally {
      await service.close();
    }
    inventory = await readInventory(table.documentClient, table.tableName);
  }, 300_000);

  afterAll(() => table?.drop());

  const allocations = () =>
    outcomes.flatMap(({ request, attempts }) => (request.kind === 'allocate' ? [{ line: request.line, answer: lastOf(attempts) }] : []));
  const transferAnswers = () =>
    outcomes.flatMap(({ request, attempts }) => (request.kind === 'transfer' ? [{ transfer: request.transfer, answer: lastOf(attempts) }] : []));
  const isMade = (answer: Answer) => answer.status === 201 || answer.status === 200;
  /** The transfers some answer says were made, with the batch each answer says their units came from. */
  const madeTransfers = () => {
    const made = new Map<string, { transfer: TransferBody; fromBatchrefs: Set<string> }>();
    for (const { transfer, answer } of transferAnswers().filter(({ answer }) => isMade(answer))) {
      const entry = made.get(transfer.transferid) ?? { transfer, fromBatchrefs: new Set<string>() };
      entry.fromBatchrefs.add(bodyOf<{ from_batchref: string }>(answer).from_batchref);
      made.set(transfer.transferid, entry);
    }
    return made;
  };

  it('met transaction conflicts in the model: the race was one', () => {
    // Printed when a test of this file fails (or with --silent=false), to judge the race it ran.
    const retried = outcomes.flatMap(({ attempts }) => attempts).filter(({ status }) => status === 503).length;
    console.info(`conflict model: ${conflicts} requests refused for a conflict during the race; ${retried} answers 503; ${madeTransfers().size} transfers made`);
    expect(conflicts).toBeGreaterThan(0);
  });

  it('answers every allocation with a batch or "out of stock", and every transfer as made or "not in stock", after 503s only with Retry-After', () => {
    const transferids = new Set(transferAnswers().map(({ transfer }) => transfer.transferid));
    const unexpected = outcomes.flatMap(({ request, attempts }) => {
      const answer = lastOf(attempts);
      const allowed =
        request.kind === 'allocate'
          ? (isMade(answer) && [...REFS, ...transferids].includes(bodyOf<{ batchref: string }>(answer).batchref)) || isOutOfStock(answer, SKU)
          : (isMade(answer) &&
              REFS.includes(bodyOf<{ from_batchref: string }>(answer).from_batchref) &&
              bodyOf<{ ref: string }>(answer).ref === request.transfer.transferid) ||
            (answer.status === 400 && messageOf(answer) === `No batch in stock at location ${FROM} has ${request.transfer.qty} units of sku ${SKU}`);
      return allowed && retriedOnlyAfter503(attempts) ? [] : [{ request, attempts: attempts.map(({ status, body }) => ({ status, body })) }];
    });
    expect(unexpected).toEqual([]);
    expect(allocations().filter(({ answer }) => answer.status === 201).length).toBeGreaterThan(0);
    expect(allocations().filter(({ answer }) => isOutOfStock(answer, SKU)).length).toBeGreaterThan(0);
    expect(madeTransfers().size).toBeGreaterThan(0);
  });

  it('leaves every invariant holding: no batch gave out more than it had, and every active transfer has its two batches', () => {
    expect(findViolations(inventory)).toEqual([]);
    const oversold = inventory.batches.filter(
      (batch) => batch.available < 0 || sumOf(inventory.lines.filter((line) => line.batchref === batch.ref).map(({ qty }) => qty)) > batch.qty,
    );
    expect(oversold).toEqual([]);
  });

  it('accounts for every unit: the batches hold what was added, and each batch at Paris gave up exactly what the transfers made from it took', () => {
    expect(sumOf(inventory.batches.map(({ qty }) => qty))).toBe(unitsAdded);
    const made = [...madeTransfers().values()];
    const qtyOf = (ref: string) => inventory.batches.find((batch) => batch.ref === ref)?.qty;
    expect(REFS.map((ref) => ({ ref, qty: qtyOf(ref) }))).toEqual(
      workload.batches.map(({ ref, qty }) => ({
        ref,
        qty: qty - sumOf(made.filter(({ fromBatchrefs }) => fromBatchrefs.has(ref)).map(({ transfer }) => transfer.qty)),
      })),
    );
  });

  it('answers the copies of a transfer alike, at most one 201, and stores each transfer made, with its incoming batch at Lyon; none other', () => {
    const byTransfer = new Map<string, Answer[]>();
    for (const { transfer, answer } of transferAnswers()) byTransfer.set(transfer.transferid, [...(byTransfer.get(transfer.transferid) ?? []), answer]);
    const unlike = [...byTransfer].filter(([, answers]) => {
      const created = answers.filter(({ status }) => status === 201).length;
      const fromBatchrefs = new Set(answers.map((answer) => bodyOf<{ from_batchref?: string }>(answer).from_batchref));
      return !(answers.every(({ status }) => status === 400) || (created <= 1 && answers.every(isMade) && fromBatchrefs.size === 1));
    });
    expect(unlike.map(([transferid, answers]) => ({ transferid, answers: answers.map(({ status, body }) => ({ status, body })) }))).toEqual([]);
    expect([...byTransfer.values()].some((answers) => answers.length > 1)).toBe(true);

    const expected = [...madeTransfers().values()].map(({ transfer, fromBatchrefs }) => ({
      transfer: { ...transfer, fromBatchref: [...fromBatchrefs][0], status: 'active' },
      incoming: { ref: transfer.transferid, sku: SKU, qty: transfer.qty, eta: transfer.eta, location: TO },
    }));
    const byRef = (a: { transfer: { transferid: string } }, b: { transfer: { transferid: string } }) => (a.transfer.transferid < b.transfer.transferid ? -1 : 1);
    const stored = inventory.transfers.map((transfer) => {
      const incoming = inventory.batches.find((batch) => batch.ref === transfer.transferid);
      return { transfer, incoming: incoming && { ref: incoming.ref, sku: incoming.sku, qty: incoming.qty, eta: incoming.eta, location: locationOf(incoming) } };
    });
    expect(stored.sort(byRef)).toEqual(expected.sort(byRef));
    expect(inventory.batches.map(({ ref }) => ref).sort()).toEqual([...REFS, ...madeTransfers().keys()].sort());
  });

  it('stores every confirmed line on the batch its answer named, and no line it did not confirm', () => {
    const confirmed = allocations()
      .filter(({ answer }) => isMade(answer))
      .map(({ line, answer }) => ({ orderid: line.orderid, sku: SKU, qty: line.qty, batchref: bodyOf<{ batchref: string }>(answer).batchref }));
    const byOrder = (a: { orderid: string }, b: { orderid: string }) => (a.orderid < b.orderid ? -1 : 1);
    expect(inventory.lines.map(({ orderid, sku, qty, batchref }) => ({ orderid, sku, qty, batchref })).sort(byOrder)).toEqual(confirmed.sort(byOrder));
    const routedOutOfParis = allocations().filter(({ line, answer }) => line.routedToFrom && isMade(answer) && !REFS.includes(bodyOf<{ batchref: string }>(answer).batchref));
    expect(routedOutOfParis).toEqual([]);
  });

  it('refuses a line routed to Paris, or a transfer, only when no batch in stock there could give it whole, even once the race was over', () => {
    // Nothing gives units back to Paris during the race: a batch that can give them now could when they were refused.
    const mostAvailable = Math.max(...inventory.batches.filter((batch) => REFS.includes(batch.ref)).map(({ available }) => available));
    const wronglyRefused = [
      ...allocations().filter(({ line, answer }) => line.routedToFrom && isOutOfStock(answer, SKU) && line.qty <= mostAvailable),
      ...transferAnswers().filter(({ transfer, answer }) => answer.status === 400 && transfer.qty <= mostAvailable),
    ];
    expect(wronglyRefused).toEqual([]);
  });
});

describe(`cancels of transfers racing allocations routed onto their incoming batches, through the conflict model (seed ${SEED})`, () => {
  const SKU = 'SOFA';
  /** Each transfer takes QTY, and each line asks for QTY at Lyon: one line fills one incoming batch, whole. */
  const QTY = 3;
  const TRANSFERS = 24;
  /** Each batch at Paris gives the units of two transfers, so that two cancels give back to one batch at once. */
  const REFS = Array.from({ length: TRANSFERS / 2 }, (_, index) => `sofa-${String(index + 1).padStart(2, '0')}`);
  const ETAS = ['2027-03-01', '2027-03-08', '2027-03-15'];
  /**
   * Clients with a request in flight at every moment, each taking the next as soon as it has its
   * answer. Sent all at once instead, the DELETEs, which have no body, would arrive whole first,
   * and every cancel would run before any allocation.
   */
  const CLIENTS = 12;

  type Request = { readonly kind: 'allocate'; readonly orderid: string } | { readonly kind: 'cancel'; readonly transferid: string };

  const transferids = Array.from({ length: TRANSFERS }, (_, index) => `transfer-${String(index + 1).padStart(2, '0')}`);
  const etaOf = (index: number) => ETAS[index % ETAS.length] as string;
  /** The order an allocation routed to Lyon prefers the incoming batches in: the earliest eta, then the ref. */
  const inPreference = transferids
    .map((transferid, index) => ({ transferid, eta: etaOf(index) }))
    .sort((a, b) => (a.eta === b.eta ? (a.transferid < b.transferid ? -1 : 1) : a.eta < b.eta ? -1 : 1));

  /**
   * For each incoming batch, in the order lines prefer them, a line and the cancel of its transfer,
   * next to each other in an order drawn: each cancel meets the line that goes for its batch.
   */
  const [requests] = fc.sample(
    fc.tuple(...inPreference.map(() => fc.boolean())).map((cancelsFirst) =>
      inPreference.flatMap(({ transferid }, index): Request[] => {
        const pair: Request[] = [{ kind: 'allocate', orderid: `order-${index + 1}` }, { kind: 'cancel', transferid }];
        return cancelsFirst[index] ? pair.reverse() : pair;
      }),
    ),
    { seed: SEED, numRuns: 1 },
  ) as [Request[]];

  const send = (service: LocalService, request: Request) =>
    request.kind === 'allocate'
      ? service.allocate({ orderid: request.orderid, sku: SKU, qty: QTY, location: TO })
      : service.request('DELETE', pathOf('transfers', request.transferid));

  const batches: NewBatch[] = REFS.map((ref) => ({ ref, sku: SKU, qty: 2 * QTY, eta: null, location: FROM }));
  let table: ModelledTable;
  let outcomes: Array<{ request: Request; attempts: Answer[] }>;
  /** The batch at Paris each transfer took its units from. */
  const fromBatchrefs = new Map<string, string>();
  let conflicts: number;
  let inventory: Inventory;

  beforeAll(async () => {
    table = await createModelledTable(CONFLICT_MODEL);
    const service = await startLocalService(table.repository());
    try {
      await addLocationsAndBatches(service, batches);
      for (const [index, transferid] of transferids.entries()) {
        const made = await service.request('POST', '/transfers', { transferid, sku: SKU, qty: QTY, from: FROM, to: TO, eta: etaOf(index) });
        expect(made.status).toBe(201);
        fromBatchrefs.set(transferid, bodyOf<{ from_batchref: string }>(made).from_batchref);
      }
      const before = table.model.counters().conflicts;
      outcomes = [];
      let next = 0;
      const client = async () => {
        for (let request = requests[next++]; request; request = requests[next++]) {
          const sent = request;
          outcomes.push({ request: sent, attempts: await sendUntilAnswered(() => send(service, sent)) });
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, client));
      conflicts = table.model.counters().conflicts - before;
    } finally {
      await service.close();
    }
    inventory = await readInventory(table.documentClient, table.tableName);
  }, 300_000);

  afterAll(() => table?.drop());

  const cancelOf = (transferid: string) =>
    lastOf(outcomes.find(({ request }) => request.kind === 'cancel' && request.transferid === transferid)?.attempts ?? []);
  const linesAnsweredOnto = (transferid: string) =>
    outcomes.filter(({ request, attempts }) => {
      const answer = lastOf(attempts);
      return request.kind === 'allocate' && (answer.status === 201 || answer.status === 200) && bodyOf<{ batchref: string }>(answer).batchref === transferid;
    }).length;
  const cancelled = () => transferids.filter((transferid) => cancelOf(transferid).status === 204);

  it('met transaction conflicts in the model, and both a cancel and a line won a race', () => {
    const refused = transferids.filter((transferid) => cancelOf(transferid).status === 409).length;
    console.info(`conflict model: ${conflicts} requests refused for a conflict; ${cancelled().length} cancels done, ${refused} refused`);
    expect(conflicts).toBeGreaterThan(0);
    expect(cancelled().length).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });

  it('answers every cancel 204 or 409 for the line on its batch, and every line with an incoming batch at Lyon or "out of stock"', () => {
    const unexpected = outcomes.filter(({ request, attempts }) => {
      const answer = lastOf(attempts);
      const allowed =
        request.kind === 'cancel'
          ? (answer.status === 204 && answer.text === '') ||
            (answer.status === 409 && messageOf(answer) === `Transfer ${request.transferid} cannot be cancelled: lines have units on its batch ${request.transferid}`)
          : ((answer.status === 201 || answer.status === 200) &&
              transferids.includes(bodyOf<{ batchref: string }>(answer).batchref) &&
              bodyOf<{ location: string }>(answer).location === TO) ||
            isOutOfStock(answer, SKU);
      return !(allowed && retriedOnlyAfter503(attempts));
    });
    expect(unexpected.map(({ request, attempts }) => ({ request, attempts: attempts.map(({ status, body }) => ({ status, body })) }))).toEqual([]);
  });

  it('lets exactly one win for each transfer: its cancel, or one line onto its incoming batch, never both, never neither', () => {
    const outcomesByTransfer = transferids.map((transferid) => ({ transferid, cancel: cancelOf(transferid).status, lines: linesAnsweredOnto(transferid) }));
    expect(outcomesByTransfer.filter(({ cancel, lines }) => !((cancel === 204 && lines === 0) || (cancel === 409 && lines === 1)))).toEqual([]);
  });

  it('leaves each transfer as its race ended: a cancelled one with its units back at Paris and no incoming batch, the others with their line', () => {
    const cancels = new Set(cancelled());
    const stored = transferids.map((transferid) => {
      const incoming = inventory.batches.find((batch) => batch.ref === transferid);
      return {
        transferid,
        status: inventory.transfers.find((transfer) => transfer.transferid === transferid)?.status,
        incoming: incoming && { qty: incoming.qty, available: incoming.available, location: locationOf(incoming) },
        lines: inventory.lines.filter((line) => line.batchref === transferid).map(({ qty }) => qty),
      };
    });
    expect(stored).toEqual(
      transferids.map((transferid) =>
        cancels.has(transferid)
          ? { transferid, status: 'cancelled', incoming: undefined, lines: [] }
          : { transferid, status: 'active', incoming: { qty: QTY, available: 0, location: TO }, lines: [QTY] },
      ),
    );
  });

  it('accounts for every unit: each batch at Paris holds what its cancelled transfers gave back, and the batches hold what was added', () => {
    const cancels = new Set(cancelled());
    const keptBy = (ref: string) => transferids.filter((transferid) => fromBatchrefs.get(transferid) === ref && !cancels.has(transferid)).length;
    expect(REFS.map((ref) => ({ ref, qty: inventory.batches.find((batch) => batch.ref === ref)?.qty }))).toEqual(
      REFS.map((ref) => ({ ref, qty: 2 * QTY - keptBy(ref) * QTY })),
    );
    expect(sumOf(inventory.batches.map(({ qty }) => qty))).toBe(sumOf(batches.map(({ qty }) => qty)));
    expect(inventory.lines.map(({ orderid }) => orderid).sort()).toEqual(
      outcomes.flatMap(({ request, attempts }) => (request.kind === 'allocate' && [200, 201].includes(lastOf(attempts).status) ? [request.orderid] : [])).sort(),
    );
    expect(findViolations(inventory)).toEqual([]);
  });

  it('refuses a line only when every incoming batch left at Lyon has a line already', () => {
    // Nothing adds stock at Lyon during the race: a batch with room now had it when the line was refused.
    const refusedLines = outcomes.filter(({ request, attempts }) => request.kind === 'allocate' && isOutOfStock(lastOf(attempts), SKU));
    const roomAtLyon = inventory.batches.filter((batch) => locationOf(batch) === TO && batch.available > 0);
    expect(refusedLines.length === 0 || roomAtLyon.length === 0).toBe(true);
  });
});
