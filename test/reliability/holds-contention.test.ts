import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewBatch } from '../../domain/model';
import { createSweepHoldsHandler } from '../../functions/sweep-holds';
import { type Inventory, findViolations, readInventory } from '../../tools/invariants';
import { type ModelledTable, createModelledTable } from '../support/conflict-model';
import { lambdaContext } from '../support/events';
import { seedOr } from './support/seed';
import { type Answer, type LocalService, sendUntilAnswered as sendAgainAfter503, startLocalService } from './support/service';

/*
 * Holds racing over scarce stock: placed, confirmed, released, extended, read, while
 * allocations take the same units, batches shrink under them, the test's clock moves past their
 * expiries mid-run and the sweeper ends them, all at once, through the handlers behind the local
 * server. Whatever order it all ran in, each hold ends in one state that agrees with every answer
 * its clients got, and every unit is counted once.
 */

const SEED = seedOr(19_2026);

/** The clock every hold rule is judged at: the test's, moved forward as requests go out. */
const START = Date.parse('2030-01-01T00:00:00.000Z');
/** Every ADVANCE_EVERY requests sent, the clock moves STEP_MS: short holds expire mid-run, long ones outlast it. */
const ADVANCE_EVERY = 10;
const STEP_MS = 15_000;
const TTLS = [20, 45, 90, 3_600] as const;

const DESK = 'DESK';
const LAMP = 'LAMP';
/** Two DESK batches on the shelf (the reference breaks their tie) and a shipment; LAMP, a second line for some holds. */
const BATCHES: readonly Omit<NewBatch, 'qty'>[] = [
  { ref: 'DESK-1', sku: DESK, eta: null },
  { ref: 'DESK-2', sku: DESK, eta: null },
  { ref: 'DESK-3', sku: DESK, eta: '2030-03-01' },
  { ref: 'LAMP-1', sku: LAMP, eta: null },
];
const REFS = BATCHES.map(({ ref }) => ref);
const refsOf = (sku: string) => BATCHES.filter((batch) => batch.sku === sku).map(({ ref }) => ref);

const HOLDS = 40;
const ALLOCATIONS = 24;
const SHRINKS = 6;
const POSITIONS = 130;
/** More clients than the local server runs at once, so it always has requests waiting. */
const CLIENTS = 20;
const MAX_CHANGE_ATTEMPTS = 10;
/**
 * Every call goes through the conflict model (local/conflict-model.ts): each write holds its items
 * for 5 ms, so that requests racing for the same batches and holds are cancelled with
 * TransactionConflict as on AWS, and retried by the adapter; past its retries they answer 503.
 */
const CONFLICT_MODEL = { holdMs: 5 };

type Line = { readonly sku: string; readonly qty: number };
type Request =
  | { readonly kind: 'place'; readonly holdid: string; readonly lines: readonly Line[]; readonly ttlSeconds: number }
  | { readonly kind: 'confirm'; readonly holdid: string; readonly orderid: string }
  | { readonly kind: 'release'; readonly holdid: string }
  | { readonly kind: 'extend'; readonly holdid: string; readonly ttlSeconds: number }
  | { readonly kind: 'read-hold'; readonly holdid: string }
  | { readonly kind: 'allocate'; readonly orderid: string; readonly sku: string; readonly qty: number }
  | { readonly kind: 'change'; readonly ref: string; readonly qty: number }
  | { readonly kind: 'read-batch'; readonly ref: string }
  /** Moves the test's clock forward; sent nowhere. */
  | { readonly kind: 'advance'; readonly ms: number }
  /** Runs the sweeper once, as its schedule would. */
  | { readonly kind: 'sweep' };

type Kind = Request['kind'];
type RequestOf<K extends Kind> = Extract<Request, { kind: K }>;

interface Workload {
  readonly qtys: readonly number[];
  /** In the order they are sent, by CLIENTS clients at once. */
  readonly requests: readonly Request[];
}

const orderOf = (holdid: string) => `order-${holdid}`;
const at = (position: number, request: Request) => ({ position, request });

/** A hold's life as its clients send it: placed, and soon after confirmed, released, extended or read, sometimes several at once. */
const holdRequests = (holdid: string) =>
  fc
    .record({
      position: fc.nat(POSITIONS),
      desk: fc.integer({ min: 1, max: 4 }),
      lamp: fc.option(fc.integer({ min: 1, max: 2 }), { freq: 3 }),
      ttlSeconds: fc.constantFrom(...TTLS),
      // A client that timed out sends the hold again.
      placeAgain: fc.option(fc.nat(6), { freq: 4 }),
      // A confirm sent twice at once is a client retrying it after a timeout.
      confirms: fc.array(fc.record({ after: fc.nat(30), otherOrder: fc.boolean(), copies: fc.constantFrom(1, 1, 2) }), { maxLength: 2 }),
      releases: fc.array(fc.nat(30), { maxLength: 1 }),
      extends: fc.array(fc.record({ after: fc.nat(30), ttlSeconds: fc.constantFrom(...TTLS) }), { maxLength: 2 }),
      reads: fc.array(fc.nat(40), { maxLength: 1 }),
    })
    .map(({ position, desk, lamp, ttlSeconds, placeAgain, confirms, releases, extends: extensions, reads }) => {
      const lines = [{ sku: DESK, qty: desk }, ...(lamp === null ? [] : [{ sku: LAMP, qty: lamp }])];
      const place: Request = { kind: 'place', holdid, lines, ttlSeconds };
      return [
        at(position, place),
        ...(placeAgain === null ? [] : [at(position + placeAgain, place)]),
        ...confirms.flatMap(({ after, otherOrder, copies }) =>
          Array.from({ length: copies }, () =>
            at(position + after, { kind: 'confirm', holdid, orderid: otherOrder ? `${orderOf(holdid)}-other` : orderOf(holdid) }),
          ),
        ),
        ...releases.map((after) => at(position + after, { kind: 'release', holdid })),
        ...extensions.map(({ after, ttlSeconds }) => at(position + after, { kind: 'extend', holdid, ttlSeconds })),
        ...reads.map((after) => at(position + after, { kind: 'read-hold', holdid })),
      ];
    });

const workloadArbitrary: fc.Arbitrary<Workload> = fc
  .record({
    qtys: fc.tuple(...BATCHES.map(() => fc.integer({ min: 8, max: 16 }))),
    holds: fc.tuple(...Array.from({ length: HOLDS }, (_, index) => holdRequests(`h-${index + 1}`))),
    allocations: fc.tuple(
      ...Array.from({ length: ALLOCATIONS }, (_, index) =>
        fc
          .record({ position: fc.nat(POSITIONS), sku: fc.constantFrom(DESK, DESK, LAMP), qty: fc.integer({ min: 1, max: 4 }) })
          .map(({ position, sku, qty }) => at(position, { kind: 'allocate', orderid: `alloc-${index + 1}`, sku, qty })),
      ),
    ),
    // Mostly lower than the batch was added with: it must give up held units or lines.
    changes: fc.array(
      fc
        .record({ position: fc.nat(POSITIONS), ref: fc.constantFrom(...REFS), qty: fc.integer({ min: 0, max: 12 }) })
        .map(({ position, ref, qty }) => at(position, { kind: 'change', ref, qty })),
      { minLength: SHRINKS, maxLength: SHRINKS },
    ),
    batchReads: fc.array(
      fc.record({ position: fc.nat(POSITIONS), ref: fc.constantFrom(...REFS) }).map(({ position, ref }) => at(position, { kind: 'read-batch', ref })),
      { minLength: 15, maxLength: 15 },
    ),
  })
  .map(({ qtys, holds, allocations, changes, batchReads }) => ({
    qtys,
    requests: [...holds.flat(), ...allocations, ...changes, ...batchReads].sort((a, b) => a.position - b.position).map(({ request }) => request),
  }));

/**
 * Sent one at a time after the race, whatever state it left, with the sweeper stopped: the batches
 * emptied (which ends every hold on them) and stocked anew, then each case the checks judge, so that
 * none of them depends on how the races fell. DESK-1 and DESK-2 hold 4, the DESK-3 shipment 3, LAMP-1 2.
 */
const FINAL_PHASE: readonly Request[] = [
  // Ends the holds that expired as the race ended, so that the last sweep below ends exactly two.
  { kind: 'sweep' },
  ...REFS.map((ref): Request => ({ kind: 'change', ref, qty: 0 })),
  { kind: 'change', ref: 'DESK-1', qty: 4 },
  { kind: 'change', ref: 'DESK-2', qty: 4 },
  { kind: 'change', ref: 'DESK-3', qty: 3 },
  { kind: 'change', ref: 'LAMP-1', qty: 2 },
  // 6: confirmed, then every other ending refused.
  { kind: 'place', holdid: 'f-1', lines: [{ sku: DESK, qty: 2 }], ttlSeconds: 60 },
  { kind: 'confirm', holdid: 'f-1', orderid: orderOf('f-1') },
  { kind: 'confirm', holdid: 'f-1', orderid: orderOf('f-1') },
  { kind: 'confirm', holdid: 'f-1', orderid: `${orderOf('f-1')}-other` },
  { kind: 'release', holdid: 'f-1' },
  { kind: 'extend', holdid: 'f-1', ttlSeconds: 60 },
  // 12: released, then confirming and placing it again refused.
  { kind: 'place', holdid: 'f-2', lines: [{ sku: DESK, qty: 2 }], ttlSeconds: 60 },
  { kind: 'release', holdid: 'f-2' },
  { kind: 'release', holdid: 'f-2' },
  { kind: 'confirm', holdid: 'f-2', orderid: orderOf('f-2') },
  { kind: 'place', holdid: 'f-2', lines: [{ sku: DESK, qty: 2 }], ttlSeconds: 60 },
  // 17: f-3 expires, f-4 was extended past the same moment.
  { kind: 'place', holdid: 'f-3', lines: [{ sku: DESK, qty: 2 }], ttlSeconds: 30 },
  { kind: 'place', holdid: 'f-4', lines: [{ sku: DESK, qty: 4 }, { sku: LAMP, qty: 1 }], ttlSeconds: 30 },
  { kind: 'extend', holdid: 'f-4', ttlSeconds: 600 },
  { kind: 'advance', ms: 31_000 },
  { kind: 'read-hold', holdid: 'f-3' },
  { kind: 'read-hold', holdid: 'f-4' },
  // 23: f-3's units, free with no sweep, go to an allocation; then f-3 can only end as expired.
  { kind: 'allocate', orderid: 'alloc-final', sku: DESK, qty: 2 },
  { kind: 'read-batch', ref: 'DESK-1' },
  { kind: 'confirm', holdid: 'f-3', orderid: orderOf('f-3') },
  { kind: 'extend', holdid: 'f-3', ttlSeconds: 60 },
  { kind: 'release', holdid: 'f-3' },
  { kind: 'confirm', holdid: 'f-4', orderid: orderOf('f-4') },
  // 29: a shrink of the shipment releases the hold that expires last, whole.
  { kind: 'place', holdid: 'f-5', lines: [{ sku: DESK, qty: 1 }], ttlSeconds: 30 },
  { kind: 'place', holdid: 'f-6', lines: [{ sku: DESK, qty: 2 }, { sku: LAMP, qty: 1 }], ttlSeconds: 60 },
  { kind: 'change', ref: 'DESK-3', qty: 1 },
  { kind: 'read-hold', holdid: 'f-6' },
  { kind: 'read-hold', holdid: 'f-5' },
  // 34: f-5 expires; its unit is held again at once, with no sweep; f-7 expires and the sweeper ends both.
  { kind: 'place', holdid: 'f-7', lines: [{ sku: LAMP, qty: 1 }], ttlSeconds: 30 },
  { kind: 'advance', ms: 31_000 },
  { kind: 'place', holdid: 'f-8', lines: [{ sku: DESK, qty: 1 }], ttlSeconds: 600 },
  { kind: 'sweep' },
  { kind: 'read-hold', holdid: 'f-5' },
  { kind: 'read-batch', ref: 'DESK-3' },
  { kind: 'read-batch', ref: 'LAMP-1' },
];

const FINAL_STATUSES = [
  'sweep',
  ...[200, 200, 200, 200, 200, 200, 200, 200],
  ...[201, 201, 200, 409, 409, 409],
  ...[201, 204, 204, 409, 409],
  ...[201, 201, 200, 'advance', 200, 200],
  ...[201, 200, 409, 409, 204, 201],
  ...[201, 201, 200, 200, 200],
  ...[201, 'advance', 201, 'sweep', 200, 200, 200],
];

const pathOf = (...segments: string[]) => `/${segments.map(encodeURIComponent).join('/')}`;

interface HoldView {
  holdid: string;
  status: string;
  expires_at: string;
  lines: Array<{ sku: string; qty: number; batchref: string; location: string }>;
  orderid?: string;
}
interface ConfirmView {
  orderid: string;
  lines: Array<{ sku: string; qty: number; batchref: string; location: string }>;
}
interface BatchView {
  ref: string;
  sku: string;
  qty: number;
  allocated: number;
  held: number;
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
interface Sweep {
  ended: number;
  failed: number;
  overdue: number;
}

interface Outcome {
  readonly request: Request;
  readonly attempts: Answer[];
  /** The test's clock when it was sent. */
  readonly sentAt: number;
}

const bodyOf = <T>(answer: Answer) => answer.body as T;
const messageOf = (answer: Answer) => String(bodyOf<{ message?: unknown }>(answer).message);
const lastOf = ({ attempts }: Outcome) => attempts[attempts.length - 1] as Answer;
const isRetryLater = (answer: Answer) =>
  answer.status === 503 &&
  Number(answer.headers['retry-after']) > 0 &&
  JSON.stringify(Object.keys(answer.body as object)) === JSON.stringify(['message', 'code', 'request_id']);
const byText = <T>(items: T[]) => items.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));

/** A hold view of these lines, each on a batch of its SKU. */
const isHoldOf = (view: HoldView, holdid: string, lines: readonly Line[]) =>
  view.holdid === holdid &&
  !Number.isNaN(Date.parse(view.expires_at)) &&
  view.lines.length === lines.length &&
  lines.every(({ sku, qty }) => view.lines.some((line) => line.sku === sku && line.qty === qty && refsOf(sku).includes(line.batchref)));

/** What the contract lets each route answer while others race it, besides a 503 to retry. */
const isAllowed = (request: Request, answer: Answer): boolean => {
  const message = messageOf(answer);
  const endedAs = `(has expired|was released|was confirmed to order ${orderOf('[^ ]+')}(-other)?)`;
  switch (request.kind) {
    case 'place':
      return (
        ((answer.status === 201 || answer.status === 200) &&
          bodyOf<HoldView>(answer).status === 'active' &&
          isHoldOf(bodyOf<HoldView>(answer), request.holdid, request.lines)) ||
        (answer.status === 400 &&
          message === `Cannot place hold ${request.holdid}` &&
          bodyOf<{ lines: Array<{ reason: string }> }>(answer).lines.every(({ reason }) => reason === 'out_of_stock')) ||
        (answer.status === 409 && new RegExp(`^Hold ${request.holdid} has ended \\((expired|released|confirmed)\\): a holdid is used once$`).test(message))
      );
    case 'confirm':
      return (
        ((answer.status === 201 || answer.status === 200) && bodyOf<ConfirmView>(answer).orderid === request.orderid) ||
        (answer.status === 404 && message === `Hold ${request.holdid} not found`) ||
        (answer.status === 409 && new RegExp(`^Hold ${request.holdid} ${endedAs}: only an active hold can be confirmed$`).test(message))
      );
    case 'release':
      return (
        (answer.status === 204 && answer.text === '') ||
        (answer.status === 404 && message === `Hold ${request.holdid} not found`) ||
        (answer.status === 409 &&
          new RegExp(`^Hold ${request.holdid} was confirmed to order ${orderOf(request.holdid)}(-other)?: cancel the order's lines instead$`).test(message))
      );
    case 'extend':
      return (
        (answer.status === 200 && bodyOf<HoldView>(answer).holdid === request.holdid && bodyOf<HoldView>(answer).status === 'active') ||
        (answer.status === 404 && message === `Hold ${request.holdid} not found`) ||
        (answer.status === 409 && new RegExp(`^Hold ${request.holdid} ${endedAs}: only an active hold can be extended$`).test(message))
      );
    case 'read-hold':
      return (answer.status === 200 && bodyOf<HoldView>(answer).holdid === request.holdid) || (answer.status === 404 && message === `Hold ${request.holdid} not found`);
    case 'allocate':
      return (
        ((answer.status === 201 || answer.status === 200) && refsOf(request.sku).includes(bodyOf<{ batchref: string }>(answer).batchref)) ||
        (answer.status === 400 && message === `Out of stock for sku ${request.sku}`)
      );
    case 'change': {
      // The batch as the request left it, or as another PATCH racing it left it a moment later.
      const { ref, reallocated } = bodyOf<BatchView & { reallocated: Reallocation[] }>(answer);
      return answer.status === 200 && ref === request.ref && reallocated.every((move) => move.from === ref);
    }
    case 'read-batch':
      return answer.status === 200 && bodyOf<BatchView>(answer).ref === request.ref;
    case 'advance':
    case 'sweep':
      return true;
  }
};

describe(`holds placed, confirmed, released, extended and expiring while allocations and shrinks race them (seed ${SEED})`, () => {
  const [workload] = fc.sample(workloadArbitrary, { seed: SEED, numRuns: 1 }) as [Workload];
  let table: ModelledTable;
  let now = START;
  let outcomes: Outcome[];
  let conflicts: number;
  let sweeps: Sweep[];
  let inventory: Inventory;
  let batchesRead: BatchView[];
  let holdsRead: Map<string, HoldView>;

  const sweeper = () => createSweepHoldsHandler(table.repository({ clock: () => now }));
  const sweepOnce = async (): Promise<Sweep> => (await sweeper()({}, lambdaContext())) as Sweep;

  const send = (service: LocalService, request: Request): Promise<Answer> => {
    switch (request.kind) {
      case 'place':
        return service.request('POST', '/holds', { holdid: request.holdid, lines: request.lines, ttl_seconds: request.ttlSeconds });
      case 'confirm':
        return service.request('POST', pathOf('holds', request.holdid, 'confirm'), { orderid: request.orderid });
      case 'release':
        return service.request('DELETE', pathOf('holds', request.holdid));
      case 'extend':
        return service.request('PATCH', pathOf('holds', request.holdid), { ttl_seconds: request.ttlSeconds });
      case 'read-hold':
        return service.request('GET', pathOf('holds', request.holdid));
      case 'allocate':
        return service.allocate({ orderid: request.orderid, sku: request.sku, qty: request.qty });
      case 'change':
        return service.request('PATCH', pathOf('batches', request.ref), { qty: request.qty });
      case 'read-batch':
        return service.request('GET', pathOf('batches', request.ref));
      case 'advance':
        now += request.ms;
        return Promise.resolve({ status: 0, headers: {}, body: 'advance', text: '' });
      case 'sweep':
        return sweepOnce().then((sweep) => {
          sweeps.push(sweep);
          return { status: 0, headers: {}, body: 'sweep', text: '' };
        });
    }
  };

  /** As a client does: a batch PATCH answered 503 is sent again after Retry-After, until answered otherwise. */
  const sendUntilAnswered = async (service: LocalService, request: Request): Promise<Outcome> => {
    const sentAt = now;
    const attempts = [await send(service, request)];
    while (request.kind === 'change' && (attempts[attempts.length - 1] as Answer).status === 503 && attempts.length < MAX_CHANGE_ATTEMPTS) {
      await sleep(Number((attempts[attempts.length - 1] as Answer).headers['retry-after']) * 1000);
      attempts.push(await send(service, request));
    }
    return { request, attempts, sentAt };
  };

  beforeAll(async () => {
    table = await createModelledTable(CONFLICT_MODEL);
    const service = await startLocalService(table.repository({ clock: () => now }));
    outcomes = [];
    sweeps = [];
    try {
      for (const [index, batch] of BATCHES.entries()) {
        expect((await service.addBatch({ ...batch, qty: workload.qtys[index] })).status).toBe(201);
      }
      // The sweeper runs over and over while the clients race, as its schedule would, but more often.
      let racing = true;
      const sweeping = (async () => {
        while (racing) {
          sweeps.push(await sweepOnce());
          await sleep(20);
        }
      })();
      const before = table.model.counters().conflicts;
      let next = 0;
      const client = async () => {
        for (let index = next++, request = workload.requests[index]; request; index = next++, request = workload.requests[index]) {
          if (index > 0 && index % ADVANCE_EVERY === 0) now += STEP_MS;
          outcomes.push(await sendUntilAnswered(service, request));
        }
      };
      try {
        await Promise.all(Array.from({ length: CLIENTS }, client));
      } finally {
        racing = false;
        await sweeping;
      }
      conflicts = table.model.counters().conflicts - before;
      for (const request of FINAL_PHASE) outcomes.push(await sendUntilAnswered(service, request));
      batchesRead = [];
      for (const ref of REFS) batchesRead.push(bodyOf<BatchView>(await service.request('GET', pathOf('batches', ref))));
      holdsRead = new Map();
      for (const holdid of new Set(outcomes.flatMap(({ request }) => ('holdid' in request ? [request.holdid] : [])))) {
        const answer = await service.request('GET', pathOf('holds', holdid));
        if (answer.status === 200) holdsRead.set(holdid, bodyOf<HoldView>(answer));
      }
    } finally {
      await service.close();
    }
    inventory = await readInventory(table.documentClient, table.tableName);
  }, 120_000);

  afterAll(() => table?.drop());

  const answersTo = <K extends Kind>(kind: K, holdid?: string) =>
    outcomes
      .filter((outcome): outcome is Outcome & { request: RequestOf<K> } => outcome.request.kind === kind)
      .filter(({ request }) => holdid === undefined || ('holdid' in request && request.holdid === holdid))
      .map((outcome) => ({ request: outcome.request, answer: lastOf(outcome), sentAt: outcome.sentAt }));
  const holdids = () => [...new Set(outcomes.flatMap(({ request }) => ('holdid' in request ? [request.holdid] : [])))];
  const storedHold = (holdid: string) => inventory.holds.find((hold) => hold.holdid === holdid);
  const end = () => now;
  /** Its status as a client reads it at the end: an active hold whose time has passed reads expired. */
  const statusAtEnd = (holdid: string) => {
    const hold = storedHold(holdid);
    if (!hold) return 'never placed';
    return hold.status === 'active' && Date.parse(hold.expiresAt) <= end() ? 'expired' : hold.status;
  };

  it('met transaction conflicts in the model: the race was one', () => {
    // Printed when a test of this file fails (or with --silent=false), to judge the race it ran.
    const retried = outcomes.flatMap(({ attempts }) => attempts).filter(({ status }) => status === 503).length;
    console.info(`conflict model: ${conflicts} requests refused for a conflict during the race; ${retried} answers 503`);
    expect(conflicts).toBeGreaterThan(0);
  });

  it('answers every request as its route may under races: no 5xx but 503 with Retry-After, and every batch PATCH in the end 200', () => {
    const unexpected = outcomes.flatMap(({ request, attempts }) =>
      attempts.filter((answer) => !(isAllowed(request, answer) || isRetryLater(answer))).map((answer) => ({ request, status: answer.status, body: answer.body })),
    );
    expect(unexpected).toEqual([]);
    expect(answersTo('change').filter(({ answer }) => answer.status !== 200)).toEqual([]);
  });

  it('answers the requests sent one at a time after the race as the rules decide, meeting every case the checks judge', () => {
    const finalOutcomes = outcomes.slice(-FINAL_PHASE.length);
    expect(finalOutcomes.map((outcome) => (outcome.request.kind === 'advance' || outcome.request.kind === 'sweep' ? outcome.request.kind : lastOf(outcome).status))).toEqual(
      FINAL_STATUSES,
    );
    const answer = (index: number) => lastOf(finalOutcomes[index] as Outcome);
    expect(bodyOf<HoldView>(answer(9)).lines).toEqual([{ sku: DESK, qty: 2, batchref: 'DESK-1', location: 'default' }]);
    expect(messageOf(answer(12))).toBe(`Hold f-1 was confirmed to order ${orderOf('f-1')}: only an active hold can be confirmed`);
    expect(messageOf(answer(13))).toBe(`Hold f-1 was confirmed to order ${orderOf('f-1')}: cancel the order's lines instead`);
    expect(messageOf(answer(18))).toBe('Hold f-2 was released: only an active hold can be confirmed');
    expect(messageOf(answer(19))).toBe('Hold f-2 has ended (released): a holdid is used once');
    expect([answer(24), answer(25)].map((read) => bodyOf<HoldView>(read).status)).toEqual(['expired', 'active']);
    // f-3's two units, still recorded on DESK-1 with no sweep run, went to the allocation.
    expect(bodyOf<{ batchref: string }>(answer(26))).toEqual({ batchref: 'DESK-1', location: 'default' });
    expect(bodyOf<BatchView>(answer(27))).toMatchObject({ qty: 4, allocated: 4, held: 0, available: 0 });
    expect(messageOf(answer(28))).toBe('Hold f-3 has expired: only an active hold can be confirmed');
    expect(messageOf(answer(29))).toBe('Hold f-3 has expired: only an active hold can be extended');
    expect(bodyOf<ConfirmView>(answer(31)).lines).toEqual([
      { sku: DESK, qty: 4, batchref: 'DESK-2', location: 'default' },
      { sku: LAMP, qty: 1, batchref: 'LAMP-1', location: 'default' },
    ]);
    expect(bodyOf<BatchView & { reallocated: unknown[] }>(answer(34))).toMatchObject({ qty: 1, held: 1, available: 0, reallocated: [] });
    expect([answer(35), answer(36)].map((read) => bodyOf<HoldView>(read).status)).toEqual(['released', 'active']);
    // f-5's unit, free the moment it expired, held again before any sweep.
    expect(bodyOf<HoldView>(answer(39)).lines).toEqual([{ sku: DESK, qty: 1, batchref: 'DESK-3', location: 'default' }]);
    expect(bodyOf<HoldView>(answer(41)).status).toBe('expired');
    expect(bodyOf<BatchView>(answer(42))).toMatchObject({ qty: 1, allocated: 0, held: 1, available: 0 });
    expect(bodyOf<BatchView>(answer(43))).toMatchObject({ qty: 2, allocated: 1, held: 0, available: 1 });
    expect(sweeps[sweeps.length - 1]).toMatchObject({ ended: 2, failed: 0 });
    expect(['f-3', 'f-5', 'f-7'].map((holdid) => storedHold(holdid)?.status)).toEqual(['expired', 'expired', 'expired']);
  });

  it('leaves a table in which every invariant holds', () => {
    expect(findViolations(inventory)).toEqual([]);
  });

  it('oversells nothing: each batch reads qty = available + allocated + held, its lines and active holds exactly, none below zero', () => {
    const activeAtEnd = inventory.holds.filter((hold) => statusAtEnd(hold.holdid) === 'active');
    const expected = REFS.map((ref) => {
      const stored = inventory.batches.find((batch) => batch.ref === ref);
      const allocated = inventory.lines.filter((line) => line.batchref === ref).reduce((sum, line) => sum + line.qty, 0);
      const held = activeAtEnd.flatMap((hold) => hold.lines.filter((line) => line.batchref === ref)).reduce((sum, line) => sum + line.qty, 0);
      return { ref, qty: stored?.qty, allocated, held, available: (stored?.qty ?? 0) - allocated - held };
    });
    expect(batchesRead.map(({ ref, qty, allocated, held, available }) => ({ ref, qty, allocated, held, available }))).toEqual(expected);
    expect(batchesRead.filter(({ available }) => available < 0)).toEqual([]);
    // Every active hold still has its units set aside on each of its batches, until its own expiry.
    const missingEntries = activeAtEnd.flatMap((hold) =>
      hold.lines.filter(({ batchref, qty }) => {
        const records = inventory.heldUnits.filter(({ units, ref }) => units.holdid === hold.holdid && ref === batchref);
        return records.reduce((sum, { source }) => sum + source.qty, 0) !== qty || records.some(({ units }) => units.expiresAt !== hold.expiresAt);
      }),
    );
    expect(missingEntries).toEqual([]);
  });

  it('ends every hold in one state that agrees with every answer its clients got', () => {
    const disagreements = holdids().flatMap((holdid) => {
      const problems: string[] = [];
      const hold = storedHold(holdid);
      const status = statusAtEnd(holdid);
      const confirms = answersTo('confirm', holdid);
      const created = confirms.filter(({ answer }) => answer.status === 201);
      const released = answersTo('release', holdid).filter(({ answer }) => answer.status === 204);
      const placed = answersTo('place', holdid).filter(({ answer }) => answer.status === 201);
      if (placed.length > 1) problems.push('placed twice');
      if (!hold) {
        if (placed.length > 0) problems.push('placed but not stored');
        return problems.map((problem) => ({ holdid, problem }));
      }
      if (holdsRead.get(holdid)?.status !== status) problems.push(`reads ${holdsRead.get(holdid)?.status}, stored as ${status}`);
      const [place] = placed;
      // As a client reads them: where the store keeps the units (`sources`) is its own.
      const heldLines = hold.lines.map(({ sku, qty, batchref, location }) => ({ sku, qty, batchref, location }));
      if (place && JSON.stringify(byText([...bodyOf<HoldView>(place.answer).lines])) !== JSON.stringify(byText(heldLines))) {
        problems.push('stored with other lines than placed');
      }
      if (created.length > 1) problems.push('confirmed twice');
      const [confirmed] = created;
      if (confirmed) {
        const { orderid, lines } = bodyOf<ConfirmView>(confirmed.answer);
        if (status !== 'confirmed' || hold.orderid !== orderid) problems.push(`confirmed to ${orderid} but ${status} ${hold.orderid ?? ''}`);
        if (JSON.stringify(byText([...lines])) !== JSON.stringify(byText(heldLines))) problems.push('confirmed with other lines than held');
        if (released.length > 0) problems.push('confirmed and released');
      }
      // A 503 may come after its write committed: then no 201 says so.
      const confirmCutOff = confirms.some(({ answer }) => answer.status === 503);
      if (status === 'confirmed' && !confirmed && !confirmCutOff) problems.push('confirmed by no answer');
      if (released.length > 0 && status !== 'released' && status !== 'expired') problems.push(`released, but ${status}`);
      if (status === 'expired' && Date.parse(hold.expiresAt) > end()) problems.push('expired before its time');
      for (const { request, answer } of [...confirms, ...answersTo('extend', holdid), ...answersTo('release', holdid)]) {
        const said = /^Hold \S+ (has expired|was released|was confirmed to order (\S+?)):/.exec(messageOf(answer));
        if (answer.status !== 409 || !said) continue;
        const [, how, orderid] = said;
        const expected = how === 'has expired' ? 'expired' : how === 'was released' ? 'released' : 'confirmed';
        if (status !== expected || (orderid !== undefined && hold.orderid !== orderid)) problems.push(`${request.kind} answered "${how}", but ${status}`);
      }
      for (const { answer } of answersTo('place', holdid)) {
        const ended = /^Hold \S+ has ended \((\w+)\)/.exec(messageOf(answer))?.[1];
        if (answer.status === 409 && ended !== status) problems.push(`place answered "has ended (${ended})", but ${status}`);
      }
      const extended = answersTo('extend', holdid).filter(({ answer }) => answer.status === 200);
      const expiries = [...placed, ...extended].map(({ answer }) => bodyOf<HoldView>(answer).expires_at);
      const extendCutOff = answersTo('extend', holdid).some(({ answer }) => answer.status === 503);
      if (!expiries.includes(hold.expiresAt) && !extendCutOff && placed.length > 0) problems.push(`expires at ${hold.expiresAt}, which no answer gave`);
      return problems.map((problem) => ({ holdid, problem }));
    });
    expect(disagreements).toEqual([]);
  });

  it("stores a confirmed hold's lines on its batches, or where the batch PATCHes reported moving them, and no line no answer created", () => {
    const moves = [...answersTo('change')]
      .filter(({ answer }) => answer.status === 200)
      .flatMap(({ answer }) => bodyOf<{ reallocated: Reallocation[] }>(answer).reallocated);
    const cutOffBatches = new Set(
      outcomes.flatMap(({ request, attempts }) => (request.kind === 'change' && attempts.some(({ status }) => status === 503) ? [request.ref] : [])),
    );
    const misplaced = [];
    for (const { answer } of answersTo('confirm').filter(({ answer }) => answer.status === 201)) {
      const { orderid, lines } = bodyOf<ConfirmView>(answer);
      for (const line of lines) {
        // A line moves from one batch at a time: follow its reported moves from the batch it was confirmed on.
        const itsMoves = moves.filter((move) => move.orderid === orderid && move.sku === line.sku);
        let place: string | null = line.batchref;
        const visited: Array<string | null> = [place];
        for (let move = itsMoves.find(({ from }) => from === place); move && place !== null; move = itsMoves.find(({ from }) => from === place)) {
          itsMoves.splice(itsMoves.indexOf(move), 1);
          place = move.batchref;
          visited.push(place);
        }
        if (visited.some((ref) => ref !== null && cutOffBatches.has(ref))) continue;
        const stored = inventory.lines.find((candidate) => candidate.orderid === orderid && candidate.sku === line.sku);
        if ((stored?.batchref ?? null) !== place || (stored && stored.qty !== line.qty) || itsMoves.length > 0) misplaced.push({ orderid, line, stored, place });
      }
    }
    expect(misplaced).toEqual([]);

    const createdBy = new Set([
      ...answersTo('confirm').filter(({ answer }) => answer.status === 201 || answer.status === 503).map(({ request }) => request.orderid),
      ...answersTo('allocate').filter(({ answer }) => answer.status === 201 || answer.status === 503).map(({ request }) => request.orderid),
    ]);
    expect(inventory.lines.filter((line) => !createdBy.has(line.orderid))).toEqual([]);
    // Lines of a confirmed hold come from that hold: an order that confirmed got the hold's SKUs and qtys.
    const linesOfHolds = inventory.lines.filter((line) => line.orderid.startsWith('order-'));
    const strays = linesOfHolds.filter((line) => {
      const hold = inventory.holds.find((candidate) => candidate.orderid === line.orderid);
      return !hold?.lines.some(({ sku, qty }) => sku === line.sku && qty === line.qty);
    });
    expect(strays).toEqual([]);
  });

  it('met, over the race and the phase after it, every ending the checks judge', () => {
    const endings = holdids().map(statusAtEnd);
    for (const status of ['confirmed', 'released', 'expired', 'active']) expect(endings).toContain(status);
    const statuses = (kind: Kind) => new Set(answersTo(kind).map(({ answer }) => answer.status));
    expect([...statuses('confirm')]).toEqual(expect.arrayContaining([201, 200, 409]));
    expect([...statuses('release')]).toEqual(expect.arrayContaining([204, 409]));
    expect([...statuses('extend')]).toEqual(expect.arrayContaining([200, 409]));
    expect(sweeps.reduce((sum, { ended }) => sum + ended, 0)).toBeGreaterThan(0);
    expect(end()).toBeGreaterThan(START + Math.max(...TTLS.slice(0, -1)) * 1000);
  });
});

/**
 * A describe block's table behind the conflict model and the local service over it, judged at the
 * block's clock: made before its tests, closed and dropped after them. Read `table` and `service` in
 * a test, once they are made.
 */
const throughConflictModel = (clock: () => number): { readonly table: ModelledTable; readonly service: LocalService } => {
  const made = {} as { table: ModelledTable; service: LocalService };
  beforeAll(async () => {
    made.table = await createModelledTable(CONFLICT_MODEL);
    made.service = await startLocalService(made.table.repository({ clock }));
  });
  afterAll(async () => {
    await made.service?.close();
    await made.table?.drop();
  });
  return made;
};

describe('a hold that expires with the sweeper stopped, through the conflict model', () => {
  const SOON = 30;
  let now = START;
  const modelled = throughConflictModel(() => now);

  it('gives its units, at once and once, to the allocations and holds that race for them, and then ends as expired', async () => {
    const { table, service } = modelled;
    expect((await service.addBatch({ ref: 'RUG-1', sku: 'RUG', qty: 5, eta: null })).status).toBe(201);
    const place = (holdid: string, qty: number) => service.request('POST', '/holds', { holdid, lines: [{ sku: 'RUG', qty }], ttl_seconds: SOON });
    expect((await place('cart-1', 5)).status).toBe(201);
    expect(messageOf(await service.allocate({ orderid: 'before', sku: 'RUG', qty: 1 }))).toBe('Out of stock for sku RUG');
    expect((await place('cart-early', 1)).status).toBe(400);

    now += SOON * 1000;

    // Ten claims of one unit each, at once: five allocations and five holds, for the five units. A
    // claim whose transaction keeps conflicting past the adapter's retries is sent again after its
    // 503's Retry-After, as a client does: a 503 for conflicts wrote nothing, so the same answers must come.
    const answers = (
      await Promise.all(
        Array.from({ length: 5 }, (_, index) => [
          sendAgainAfter503(() => service.allocate({ orderid: `order-${index}`, sku: 'RUG', qty: 1 })),
          sendAgainAfter503(() => place(`cart-next-${index}`, 1)),
        ]).flat(),
      )
    ).map((attempts) => attempts[attempts.length - 1] as Answer);
    const statuses = answers.map(({ status }) => status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(5);
    expect(statuses.filter((status) => status !== 201 && status !== 400)).toEqual([]);
    const rug = bodyOf<BatchView>(await service.request('GET', '/batches/RUG-1'));
    expect(rug.available).toBe(0);
    expect(rug.allocated + rug.held).toBe(5);
    expect(bodyOf<HoldView>(await service.request('GET', '/holds/cart-1')).status).toBe('expired');
    expect(findViolations(await readInventory(table.documentClient, table.tableName))).toEqual([]);

    // Its record still says active, nothing having ended it; the release ends it as expired, giving nothing twice.
    expect((await readInventory(table.documentClient, table.tableName)).holds.find(({ holdid }) => holdid === 'cart-1')?.status).toBe('active');
    expect((await service.request('DELETE', '/holds/cart-1')).status).toBe(204);
    const after = await readInventory(table.documentClient, table.tableName);
    expect(after.holds.find(({ holdid }) => holdid === 'cart-1')?.status).toBe('expired');
    expect(bodyOf<BatchView>(await service.request('GET', '/batches/RUG-1'))).toEqual(rug);
    expect(findViolations(after)).toEqual([]);
  });
});

describe('a hold at the edges of its races, through the conflict model', () => {
  let table: ModelledTable;
  beforeAll(async () => {
    table = await createModelledTable(CONFLICT_MODEL);
  });
  afterAll(() => table?.drop());

  it('confirmed by two requests to one order at once, answers one 201 and one 200, never a 409', async () => {
    const service = await startLocalService(table.repository({ clock: () => START }));
    try {
      expect((await service.addBatch({ ref: 'CHAIR-1', sku: 'CHAIR', qty: 20, eta: null })).status).toBe(201);
      const answers = [];
      for (let index = 0; index < 10; index++) {
        const holdid = `twice-${index}`;
        expect((await service.request('POST', '/holds', { holdid, lines: [{ sku: 'CHAIR', qty: 1 }] })).status).toBe(201);
        // A 503 (the two meeting again and again past the adapter's retries) is sent again after Retry-After.
        const confirm = async () => {
          const attempts = await sendAgainAfter503(() => service.request('POST', pathOf('holds', holdid, 'confirm'), { orderid: `order-${holdid}` }));
          return attempts[attempts.length - 1] as Answer;
        };
        answers.push((await Promise.all([confirm(), confirm()])).map(({ status }) => status).sort());
      }
      expect(answers).toEqual(Array.from({ length: 10 }, () => [200, 201]));
    } finally {
      await service.close();
    }
    expect(findViolations(await readInventory(table.documentClient, table.tableName))).toEqual([]);
  });

  it('found expired by a confirm, is not released afterwards by a request judged at a moment before its expiry', async () => {
    const placedAt = START;
    const expiry = placedAt + 60_000;
    const [before, after] = await Promise.all([
      startLocalService(table.repository({ clock: () => expiry - 1 })),
      startLocalService(table.repository({ clock: () => expiry })),
    ]);
    try {
      const early = await startLocalService(table.repository({ clock: () => placedAt }));
      expect((await early.addBatch({ ref: 'STOOL-1', sku: 'STOOL', qty: 2, eta: null })).status).toBe(201);
      expect((await early.request('POST', '/holds', { holdid: 'edge', lines: [{ sku: 'STOOL', qty: 2 }], ttl_seconds: 60 })).status).toBe(201);
      await early.close();

      const refused = await after.request('POST', '/holds/edge/confirm', { orderid: 'order-edge' });
      expect(refused.status).toBe(409);
      expect(messageOf(refused)).toBe('Hold edge has expired: only an active hold can be confirmed');
      // A release that read the hold a moment before its expiry, and commits only now.
      expect((await before.request('DELETE', '/holds/edge')).status).toBe(204);
      expect((await before.request('PATCH', '/holds/edge', { ttl_seconds: 600 })).status).toBe(409);

      expect(bodyOf<HoldView>(await after.request('GET', '/holds/edge')).status).toBe('expired');
      expect(bodyOf<BatchView>(await after.request('GET', '/batches/STOOL-1'))).toMatchObject({ qty: 2, held: 0, available: 2 });
    } finally {
      await Promise.all([before.close(), after.close()]);
    }
    expect(findViolations(await readInventory(table.documentClient, table.tableName))).toEqual([]);
  });
});

describe('a drop with carts on one batch, spread over pieces, through the conflict model', () => {
  const CARTS = 60;
  const CLIENTS_AT_ONCE = 24;
  let now = START;
  const modelled = throughConflictModel(() => now);

  const lastAnswer = async (send: () => Promise<Answer>) => {
    const attempts = await sendAgainAfter503(send);
    return attempts[attempts.length - 1] as Answer;
  };

  it('spreads the batch its holds meet on, places, confirms and releases on its pieces, and counts every unit once through a gather', async () => {
    const { table, service } = modelled;
    expect((await service.addBatch({ ref: 'TEE-1', sku: 'TEE', qty: 1_000, eta: null })).status).toBe(201);
    // A cart holds 1 to 3, then confirms (70%), releases (20%) or leaves its hold active (10%).
    const then = fc.constantFrom(...Array<'confirm'>(7).fill('confirm'), 'release' as const, 'release' as const, 'leave' as const);
    const carts = fc
      .sample(fc.record({ qty: fc.integer({ min: 1, max: 3 }), then }), { seed: SEED, numRuns: CARTS })
      .map((cart, index) => ({ holdid: `tee-cart-${index}`, ...cart }));
    const outcomes = new Map<string, { placed: boolean; ended: 'confirm' | 'release' | 'leave' | 'failed' }>();
    let spreadSeen = false;
    const runCart = async ({ holdid, qty, then }: (typeof carts)[number]) => {
      const placed = await lastAnswer(() => service.request('POST', '/holds', { holdid, lines: [{ sku: 'TEE', qty }], ttl_seconds: 600 }));
      if (placed.status !== 201) return outcomes.set(holdid, { placed: false, ended: 'failed' });
      spreadSeen ||= (await readInventory(table.documentClient, table.tableName)).batches.some(({ pieces }) => pieces !== undefined);
      const ended =
        then === 'confirm'
          ? await lastAnswer(() => service.request('POST', pathOf('holds', holdid, 'confirm'), { orderid: `order-${holdid}` }))
          : then === 'release'
            ? await lastAnswer(() => service.request('DELETE', pathOf('holds', holdid)))
            : undefined;
      return outcomes.set(holdid, { placed: true, ended: ended === undefined || ended.status < 300 ? then : 'failed' });
    };
    for (let start = 0; start < CARTS; start += CLIENTS_AT_ONCE) await Promise.all(carts.slice(start, start + CLIENTS_AT_ONCE).map(runCart));

    expect([...outcomes.values()].filter(({ placed, ended }) => !placed || ended === 'failed')).toEqual([]);
    expect(spreadSeen).toBe(true);
    const units = (kind: 'confirm' | 'release' | 'leave') => carts.filter(({ then }) => then === kind).reduce((sum, { qty }) => sum + qty, 0);
    const tee = bodyOf<BatchView>(await service.request('GET', '/batches/TEE-1'));
    expect(tee).toMatchObject({ qty: 1_000, allocated: units('confirm'), held: units('leave'), available: 1_000 - units('confirm') - units('leave') });
    expect(findViolations(await readInventory(table.documentClient, table.tableName), now)).toEqual([]);

    // The sale is over: a read after a while gathers the batch, and the holds left end on its own item.
    now += 5 * 60_000;
    expect(bodyOf<{ held: number }>(await service.request('GET', '/skus/TEE/stock')).held).toBe(units('leave'));
    expect((await readInventory(table.documentClient, table.tableName)).batches.find(({ ref }) => ref === 'TEE-1')?.pieces).toBeUndefined();
    for (const { holdid } of carts.filter(({ then }) => then === 'leave')) expect((await lastAnswer(() => service.request('DELETE', pathOf('holds', holdid)))).status).toBe(204);
    expect(bodyOf<BatchView>(await service.request('GET', '/batches/TEE-1'))).toMatchObject({ allocated: units('confirm'), held: 0, available: 1_000 - units('confirm') });
    expect(findViolations(await readInventory(table.documentClient, table.tableName), now)).toEqual([]);
  }, 120_000);
});
