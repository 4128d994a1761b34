import { setTimeout as sleep } from 'node:timers/promises';
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
  /**
   * Small batches at Paris, so that the takes pass from one to the next as each drains: the moments a
   * transfer's take, read with units left, meets lines that took them first.
   */
  const REFS = Array.from({ length: 8 }, (_, index) => `armchair-${index + 1}`);
  const LINES = 120;
  const TRANSFERS = 30;
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
      batchQtys: fc.tuple(...REFS.map(() => fc.integer({ min: 15, max: 30 }))),
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
            position: fc.nat(POSITIONS),
            qty: fc.integer({ min: 2, max: 6 }),
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
  /**
   * A SKU for each round: one batch at Paris gives the units of its two transfers, whose incoming
   * batches at Lyon are all its stock there, so a line routed to Lyon has no other choice.
   */
  const SKUS = Array.from({ length: 20 }, (_, index) => `SOFA-${String(index + 1).padStart(2, '0')}`);
  /**
   * Each transfer takes QTY, and each line asks for LINE_QTY at Lyon: one line fits on an incoming
   * batch, a second does not, and the batch keeps a unit, so it stays where a cancel's delete finds
   * it (a take of its last units would move it out of the stock range, and only the delete's
   * condition on it as read stops a cancel that read it before a line's take).
   */
  const QTY = 3;
  const LINE_QTY = 2;
  /** The first is the one lines prefer, then the second. */
  const ETAS = ['2027-03-01', '2027-03-15'];
  /**
   * When each request of a round is sent, in ms after the round starts. A cancel reads the incoming
   * batch, then writes: only the condition of its write on the batch as read stops it when a line's
   * write was held (5 ms) as it read, which some of these meet.
   */
  const sendAfter = fc.integer({ min: 0, max: 10 });

  type Request = { readonly kind: 'allocate'; readonly orderid: string; readonly sku: string } | { readonly kind: 'cancel'; readonly transferid: string };
  interface Round {
    readonly sku: string;
    readonly transferids: readonly string[];
    /** Two lines and the cancels of the two transfers, each sent after its delay. */
    readonly requests: ReadonlyArray<{ readonly request: Request; readonly after: number }>;
  }

  const transferidsOf = (sku: string) => ETAS.map((_, index) => `${sku.toLowerCase()}-transfer-${index + 1}`);
  const [rounds] = fc.sample(
    fc.tuple(...SKUS.map(() => fc.tuple(sendAfter, sendAfter, sendAfter, sendAfter))).map((delays) =>
      SKUS.map((sku, index): Round => {
        const transferids = transferidsOf(sku);
        const requests: Request[] = [
          ...transferids.map((transferid) => ({ kind: 'cancel', transferid }) as const),
          ...transferids.map((_, line) => ({ kind: 'allocate', orderid: `order-${index + 1}-${line + 1}`, sku }) as const),
        ];
        return { sku, transferids, requests: requests.map((request, at) => ({ request, after: delays[index]?.[at] as number })) };
      }),
    ),
    { seed: SEED, numRuns: 1 },
  ) as [Round[]];
  const transferids = rounds.flatMap((round) => round.transferids);

  const send = (service: LocalService, request: Request) =>
    request.kind === 'allocate'
      ? service.allocate({ orderid: request.orderid, sku: request.sku, qty: LINE_QTY, location: TO })
      : service.request('DELETE', pathOf('transfers', request.transferid));

  const batches: NewBatch[] = SKUS.map((sku) => ({ ref: `${sku.toLowerCase()}-1`, sku, qty: ETAS.length * QTY, eta: null, location: FROM }));
  let table: ModelledTable;
  let outcomes: Array<{ request: Request; attempts: Answer[] }>;
  let conflicts: number;
  let inventory: Inventory;

  beforeAll(async () => {
    table = await createModelledTable(CONFLICT_MODEL);
    const service = await startLocalService(table.repository());
    try {
      await addLocationsAndBatches(service, batches);
      for (const { sku, transferids } of rounds) {
        for (const [index, transferid] of transferids.entries()) {
          const made = await service.request('POST', '/transfers', { transferid, sku, qty: QTY, from: FROM, to: TO, eta: ETAS[index] });
          expect(made.status).toBe(201);
        }
      }
      const before = table.model.counters().conflicts;
      outcomes = [];
      // One round after another: each SKU's four requests meet at the moments drawn for them.
      for (const round of rounds) {
        const race = ({ request, after }: Round['requests'][number]) =>
          sleep(after).then(async () => ({ request, attempts: await sendUntilAnswered(() => send(service, request)) }));
        outcomes.push(...(await Promise.all(round.requests.map(race))));
      }
      conflicts = table.model.counters().conflicts - before;
    } finally {
      await service.close();
    }
    inventory = await readInventory(table.documentClient, table.tableName);
  }, 300_000);

  afterAll(() => table?.drop());

  const cancelOf = (transferid: string) =>
    lastOf(outcomes.find(({ request }) => request.kind === 'cancel' && request.transferid === transferid)?.attempts ?? []);
  const isMade = (answer: Answer) => answer.status === 201 || answer.status === 200;
  const linesAnswered = () =>
    outcomes.flatMap(({ request, attempts }) => {
      const answer = lastOf(attempts);
      return request.kind === 'allocate' && isMade(answer) ? [{ orderid: request.orderid, batchref: bodyOf<{ batchref: string }>(answer).batchref }] : [];
    });
  const cancelled = () => transferids.filter((transferid) => cancelOf(transferid).status === 204);

  it('met transaction conflicts in the model, and both a cancel and a line won a race', () => {
    const refused = transferids.filter((transferid) => cancelOf(transferid).status === 409).length;
    console.info(`conflict model: ${conflicts} requests refused for a conflict; ${cancelled().length} cancels done, ${refused} refused`);
    expect(conflicts).toBeGreaterThan(0);
    expect(cancelled().length).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });

  it('answers every cancel 204 or 409 for the line on its batch, and every line with an incoming batch of its SKU at Lyon or "out of stock"', () => {
    const unexpected = outcomes.filter(({ request, attempts }) => {
      const answer = lastOf(attempts);
      const allowed =
        request.kind === 'cancel'
          ? (answer.status === 204 && answer.text === '') ||
            (answer.status === 409 && messageOf(answer) === `Transfer ${request.transferid} cannot be cancelled: lines have units on its batch ${request.transferid}`)
          : (isMade(answer) && transferidsOf(request.sku).includes(bodyOf<{ batchref: string }>(answer).batchref) && bodyOf<{ location: string }>(answer).location === TO) ||
            isOutOfStock(answer, request.sku);
      return !(allowed && retriedOnlyAfter503(attempts));
    });
    expect(unexpected.map(({ request, attempts }) => ({ request, attempts: attempts.map(({ status, body }) => ({ status, body })) }))).toEqual([]);
  });

  it('lets exactly one win for each transfer: its cancel, or one line onto its incoming batch, never both, never neither', () => {
    const byTransfer = transferids.map((transferid) => ({
      transferid,
      cancel: cancelOf(transferid).status,
      lines: linesAnswered().filter(({ batchref }) => batchref === transferid).length,
    }));
    expect(byTransfer.filter(({ cancel, lines }) => !((cancel === 204 && lines === 0) || (cancel === 409 && lines === 1)))).toEqual([]);
  });

  it('leaves each transfer as its race ended: a cancelled one with no incoming batch, the others with their line', () => {
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
          : { transferid, status: 'active', incoming: { qty: QTY, available: QTY - LINE_QTY, location: TO }, lines: [LINE_QTY] },
      ),
    );
  });

  it('accounts for every unit: each batch at Paris holds what its cancelled transfers gave back, every confirmed line is stored, and nothing else', () => {
    const cancels = new Set(cancelled());
    expect(batches.map(({ ref }) => ({ ref, qty: inventory.batches.find((batch) => batch.ref === ref)?.qty }))).toEqual(
      batches.map(({ ref, sku }) => ({ ref, qty: QTY * transferidsOf(sku).filter((transferid) => cancels.has(transferid)).length })),
    );
    expect(sumOf(inventory.batches.map(({ qty }) => qty))).toBe(sumOf(batches.map(({ qty }) => qty)));
    const byOrder = (a: { orderid: string }, b: { orderid: string }) => (a.orderid < b.orderid ? -1 : 1);
    expect(inventory.lines.map(({ orderid, batchref }) => ({ orderid, batchref })).sort(byOrder)).toEqual(linesAnswered().sort(byOrder));
    expect(findViolations(inventory)).toEqual([]);
  });

  it('refuses a line only when both incoming batches of its SKU have a line or were cancelled', () => {
    // Nothing adds stock at Lyon during the race: a batch with room now had it when the line was refused.
    const refusedSkus = outcomes.flatMap(({ request, attempts }) => (request.kind === 'allocate' && isOutOfStock(lastOf(attempts), request.sku) ? [request.sku] : []));
    const withRoomAtLyon = inventory.batches.filter((batch) => locationOf(batch) === TO && batch.available >= LINE_QTY).map(({ sku }) => sku);
    expect(refusedSkus.filter((sku) => withRoomAtLyon.includes(sku))).toEqual([]);
  });
});
