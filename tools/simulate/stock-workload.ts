import type { Chance } from './chance';
import { type Draft, type Episode, type Places, type StartingBatch, type Step, inTurn, twice } from './workload-steps';

/*
 * The adjustments a run's clients send (docs/api.md, "Adjustments"), drawn from its seed: units
 * taken or added for a reason, a qty set, compare and set on the qty a client last read, counts
 * taken now; and episodes of counts the warehouse took at a moment of the run (a stocktake) and
 * reports later, after shipments, transfers, adjustments and changes of the batch, some of them
 * older than a count already applied. Adjustment ids come from a few, so that one is often used
 * again: by a client's retry (the same body), or by another adjustment.
 */

const ADJUSTMENTS = ['a1', 'a2', 'a3', 'a4', 'a5'] as const;
/** Counts' ids, apart from the other adjustments': a count's retry must find its own, as a warehouse system's would. */
const COUNTS = ['k1', 'k2', 'k3', 'k4'] as const;
const TAKEN = ['damaged', 'lost'] as const;
const ADDED = ['found', 'returned', 'received'] as const;
/** A count's own parcels, so that a count's episode ships what it allocated. */
const PARCELS = ['parcel4', 'parcel5'] as const;
const ORDERS = ['o5', 'o6', 'o7'] as const;
const TRANSFERS = ['t1', 't2', 't3'] as const;
const TRANSFER_ETA = '2027-05-01';
/** A count reported long after it was taken: earlier than anything the run did, its batch's first units among what came since. */
const LONG_AGO = '2026-05-31T00:00:00.000Z';
/** Two more ways to write a count's moment, which are the same moment: counts compare as moments, not text. */
const OFFSETS_MINUTES = [120, -300] as const;

const note = (chance: Chance) => (chance.chance(0.15) ? { note: chance.pick(['aisle 4', 'cycle count', 'water leak']) } : {});

/** The qty a client last read of a batch: most often what it started with, which the run has changed since as often as not. */
const expected = (chance: Chance, batch: StartingBatch | undefined) => (chance.chance(0.25) ? { expected_qty: batch && chance.chance(0.7) ? batch.qty : chance.int(0, 8) } : {});

const adjustment = (adjustmentid: string, ref: string, fields: object): Draft => ({ kind: 'http', routeKey: 'POST /adjustments', body: { adjustmentid, ref, ...fields } });

/**
 * One adjustment of the run's middle: of a batch it started with or, now and then, a transfer's
 * incoming batch. Deltas take more often than they add, a few units at a time (at times more than
 * the batch has: a 400); a qty set or a count taken now, to nothing among them; now and then a
 * count dated in the future (a 400), or long ago.
 */
export const drawAdjustment = (chance: Chance, places: Places): Draft => {
  const batch = places.locations.length > 1 && chance.chance(0.15) ? undefined : chance.pick(places.batches);
  const ref = batch?.ref ?? chance.pick(TRANSFERS);
  const fields = chance.weighted<object>([
    [{ reason: chance.pick(TAKEN), delta: -chance.int(1, 3) }, 4],
    [{ reason: chance.pick(ADDED), delta: chance.int(1, 3) }, 3],
    [{ reason: chance.pick(['correction', 'received']), qty: chance.int(0, 10) }, 1],
    [{ reason: 'counted', qty: chance.int(0, 8) }, 2],
    [{ reason: 'counted', qty: chance.int(0, 8), counted_at: LONG_AGO }, 1],
    [{ reason: 'counted', qty: chance.int(0, 8), counted_at: '2099-01-01T00:00:00Z' }, 0.3],
  ]);
  return adjustment(chance.pick(ADJUSTMENTS), ref, { ...fields, ...expected(chance, batch), ...note(chance) });
};

/** Imports' ids, few, so that one is often sent again: by a client's retry (the same rows), or with other rows (a 409). */
const IMPORTS = ['i1', 'i2', 'i3'] as const;
/** Refs of the batches an import adds. */
const IMPORTED = ['n1', 'n2', 'n3'] as const;

/** The moment every run starts at (./simulated-world.ts): its starting batches are added then, and a count as of then finds them. */
const RUN_START = '2026-06-01T00:00:00.000Z';

/**
 * A row of an import: a batch it adds or recounts (now and then a qty no batch takes), a count
 * taken long ago, or a count of a SKU at a place, as of the run's start or long ago, about what
 * its batches there started with (now and then at a place where the SKU has none).
 */
const importRow = (chance: Chance, places: Places): object => {
  const batch = chance.pick(places.batches);
  const place = chance.chance(0.2) ? chance.pick(places.locations) : batch.location;
  const onHand = places.batches.filter(({ sku, location, eta }) => sku === batch.sku && location === place && eta === null).reduce((sum, { qty }) => sum + qty, 0);
  return chance.weighted<object>([
    [{ sku: batch.sku, location: place, on_hand: chance.int(Math.max(0, onHand - 6), onHand + 3), counted_at: chance.chance(0.8) ? RUN_START : LONG_AGO }, 1.5],
    [{ ref: batch.ref, sku: batch.sku, qty: chance.int(1, 10), eta: chance.chance(0.8) ? batch.eta : null, ...(batch.location === 'default' ? {} : { location: batch.location }), ...expected(chance, batch) }, 4],
    [{ ref: chance.pick(IMPORTED), sku: batch.sku, qty: chance.int(1, 8), eta: null }, 2],
    [{ ref: batch.ref, qty: chance.int(0, 8), counted_at: LONG_AGO, ...expected(chance, batch) }, 2],
    [{ ref: batch.ref, sku: batch.sku, qty: 0, eta: null }, 0.3],
  ]);
};

/**
 * An import of rows sent inline (docs/api.md, "Imports"): a few rows of the run's batches, now and
 * then enough for two chunks, so that a worker that crashes between them, and is sent again, must
 * resume from the chunk it recorded.
 */
export const drawImport = (chance: Chance, places: Places): Draft => {
  const rows = Array.from({ length: chance.chance(0.15) ? chance.int(26, 28) : chance.int(1, 6) }, () => importRow(chance, places));
  return {
    kind: 'http',
    routeKey: 'POST /imports',
    body: { importid: chance.pick(IMPORTS), rows, ...(chance.chance(0.15) ? { dry_run: true } : {}), ...(chance.chance(0.3) ? { validate_first: false } : {}) },
  };
};

const stocktake = (at: number, { ref }: StartingBatch, after?: Step): Step => ({ at, draft: { kind: 'stocktake', ref }, ...(after ? { after } : {}) });

/** A count of `batch` as of `taken`, sent at `at`: what the warehouse found then, about what the batch started with. */
const countOf = (chance: Chance, batch: StartingBatch, taken: Step, at: number, after?: Step): Step => ({
  at,
  draft: adjustment(chance.pick(COUNTS), batch.ref, { reason: 'counted', qty: chance.int(Math.max(0, batch.qty - 2), batch.qty + 2), ...expected(chance, batch), ...note(chance) }),
  countedAtOf: taken,
  ...(after ? { after } : {}),
});

const lineOn = (orderid: string, { sku, location }: StartingBatch, qty: number): Draft => ({ kind: 'http', routeKey: 'POST /allocate', body: { orderid, sku, qty, location } });

/**
 * What changes a batch after a count was taken, and before the count is reported: units of a line
 * on it shipped, units sent away to another place, an adjustment, or its qty set; each a step or
 * two of its own, in turn after `after`.
 */
const changesOf = (chance: Chance, places: Places, batch: StartingBatch, at: number, after?: Step): Step[] => {
  const others = places.locations.filter((id) => id !== batch.location);
  const draws: (readonly [() => Draft[], number])[] = [
    [
      () => {
        const orderid = chance.pick(ORDERS);
        const qty = chance.int(1, 2);
        const ship: Draft = { kind: 'http', routeKey: 'POST /shipments', body: { shipmentid: chance.pick(PARCELS), orderid, lines: [{ sku: batch.sku, qty }] } };
        return [lineOn(orderid, batch, qty), ship];
      },
      3,
    ],
    [() => [{ kind: 'http', routeKey: 'POST /transfers', body: { transferid: chance.pick(TRANSFERS), sku: batch.sku, qty: chance.int(1, 2), from: batch.location, to: chance.pick(others), eta: TRANSFER_ETA } }], others.length > 0 && batch.eta === null ? 2 : 0],
    [() => [adjustment(chance.pick(ADJUSTMENTS), batch.ref, chance.chance(0.5) ? { reason: chance.pick(TAKEN), delta: -1 } : { reason: chance.pick(ADDED), delta: chance.int(1, 2) })], 2],
    [() => [{ kind: 'http', routeKey: 'PATCH /batches/{ref}', path: { ref: batch.ref }, body: { qty: chance.int(batch.qty, batch.qty + 3) } }], 1],
  ];
  const drafts = Array.from({ length: chance.int(1, 3) }, () => chance.weighted(draws)()).flat();
  return inTurn(chance, at, drafts, after);
};

const GET_BATCH = (ref: string): Draft => ({ kind: 'http', routeKey: 'GET /batches/{ref}', path: { ref } });

/**
 * A count reported late: the batch counted at a stocktake, changed since, and the count sent once
 * the changes have their answers, or while the last of them is in flight, sometimes twice (a
 * retry, maybe written with another offset, or the stocktake reported again under another id);
 * then the batch read. Now and then the batch is one
 * added after the stocktake, whose first units the count takes as come since.
 */
const lateCount: Episode = (chance, places, at) => {
  const added = chance.chance(0.2);
  const batch = added ? { ref: 'bk', sku: chance.pick(places.batches).sku, qty: chance.int(2, 6), eta: null, location: 'default' } : chance.pick(places.batches);
  const taken = stocktake(at, batch);
  const addition: Step[] = added ? [{ at: at + 1, draft: { kind: 'http', routeKey: 'POST /add_batch', body: { ref: batch.ref, sku: batch.sku, qty: batch.qty, eta: null } }, after: taken }] : [];
  const changes = changesOf(chance, places, batch, at + 2, addition[0] ?? taken);
  const last = changes.at(-1) as Step;
  const racing = chance.chance(0.3);
  const count = countOf(chance, batch, taken, last.at + (racing ? 0 : 1), racing ? changes.at(-2) : last);
  // Its copy written with another offset (the same moment), or the stocktake reported again under
  // another id, once the first has its answer: a count as of the same moment as the last applied is not stale.
  const again = twice(chance, count).map((step, index) => {
    if (index === 0) return step;
    if (chance.chance(0.3)) return { ...step, countedAtOffset: chance.pick(OFFSETS_MINUTES) };
    return chance.chance(0.4) ? { ...step, at: step.at + 1, draft: adjustment(chance.pick(COUNTS), batch.ref, { reason: 'counted', qty: chance.int(0, batch.qty + 2) }), after: count } : step;
  });
  const read: Step = { at: count.at + 2, draft: GET_BATCH(batch.ref), after: count };
  return [taken, ...addition, ...changes, ...(chance.chance(0.4) ? again : [count]), read];
};

/**
 * Two counts of one batch taken a while apart, a change between them, reported in either order:
 * the older one after the newer one is stale (409), and changes nothing; before it, both apply. Or
 * a count taken now, then an older one.
 */
const countsOutOfOrder: Episode = (chance, places, at) => {
  const batch = chance.pick(places.batches);
  const first = stocktake(at, batch);
  const between = changesOf(chance, places, batch, at + 1, first);
  const second = stocktake((between.at(-1) as Step).at + 1, batch, between.at(-1));
  const newer: Step = chance.chance(0.25)
    ? { at: second.at + 1, draft: adjustment(chance.pick(COUNTS), batch.ref, { reason: 'counted', qty: chance.int(0, batch.qty + 2) }), after: second }
    : countOf(chance, batch, second, second.at + 1, second);
  const older = countOf(chance, batch, first, newer.at + 1, newer);
  let [one, other] = [newer, older];
  if (chance.chance(0.3)) {
    one = { ...older, at: second.at + 1, after: second };
    other = { ...newer, at: one.at + 1, after: one };
  }
  return [first, ...between, second, one, other, { at: other.at + 2, draft: GET_BATCH(batch.ref), after: other }];
};

/** A count as of a moment just past, sent at once with changes of its batch: they race its read of the changes since and its write. */
const countRacingChanges: Episode = (chance, places, at) => {
  const batch = chance.pick(places.batches);
  const taken = stocktake(at, batch);
  const changes = changesOf(chance, places, batch, at + 1, taken);
  const count = countOf(chance, batch, taken, (changes[0] as Step).at + chance.int(0, 2), taken);
  return [taken, ...changes, ...twice(chance, count)];
};

/** A read of a SKU's history: of one of the run's SKUs, at one of its places or all, a page of a few entries or of many. */
export const historyRead = (chance: Chance, places: Places, sku = chance.pick(places.batches).sku): Draft => {
  const location = chance.chance(0.3) ? chance.pick(['default', ...places.locations]) : undefined;
  const limit = chance.pick([undefined, '1', '2', '3']);
  const query = { ...(location === undefined ? {} : { location }), ...(limit === undefined ? {} : { limit }) };
  return { kind: 'http', routeKey: 'GET /skus/{sku}/history', path: { sku }, ...(Object.keys(query).length > 0 ? { query } : {}) };
};

/** Changes of a batch, and its SKU's history read a page after another while they are made, each page from the cursor the one before answered. */
const historyPaged: Episode = (chance, places, at) => {
  const batch = chance.pick(places.batches);
  const changes = changesOf(chance, places, batch, at);
  const read = historyRead(chance, places, batch.sku);
  const first: Step = { at: at + chance.int(0, 3), draft: read };
  const pages = [first];
  for (let page = chance.int(2, 6); page > 0; page--) {
    const before = pages.at(-1) as Step;
    pages.push({ at: before.at + chance.int(0, 2), draft: read, after: before, cursorOf: before });
  }
  return [...changes, ...pages];
};

/** The ids of imports of files, apart from those sent inline: a file is put once an import, and another import under an id is a 409. */
const FILE_IMPORTS = ['f1', 'f2'] as const;

/**
 * An import of a file (docs/api.md, "Files of rows"): opened, its file put once the import answered
 * where, and run by the engine of imports through the import worker, now and then over several
 * chunks; the run's faults kill the worker, and the engine runs the import again from its start.
 * Now and then opened again meanwhile, as a client's retry does; then read.
 */
const fileImport: Episode = (chance, places, at) => {
  const importid = chance.pick(FILE_IMPORTS);
  const rows = Array.from({ length: chance.chance(0.3) ? chance.int(26, 55) : chance.int(1, 8) }, () => importRow(chance, places));
  const opening: Draft = { kind: 'http', routeKey: 'POST /imports', body: { importid, format: 'jsonl', ...(chance.chance(0.1) ? { dry_run: true } : {}), ...(chance.chance(0.3) ? { validate_first: false } : {}) } };
  const open: Step = { at, draft: opening };
  const file: Step = { at: at + 1, draft: { kind: 'import-file', importid, rows }, after: open };
  const again: Step[] = chance.chance(0.3) ? [{ at: at + chance.int(1, 3), draft: opening }] : [];
  const read: Step = { at: at + 3, draft: { kind: 'http', routeKey: 'GET /imports/{importid}', path: { importid } }, after: file };
  return [open, file, ...again, read];
};

export const STOCK_EPISODES: readonly (readonly [Episode, number])[] = [
  [fileImport, 2],
  [historyPaged, 2],
  [lateCount, 3],
  [countsOutOfOrder, 2],
  [countRacingChanges, 2],
];
