import type { Adjustment } from './adjustments';
import { BatchContended } from './errors';
import { type Batch, type BatchChange, type ListedLine, type Reallocation, afterMoves, heldOf, changedBatch, isSameBatch, linesToTakeOff, partsOf } from './model';
import { holdsToEnd } from './hold-services';
import { LazyExpiry, freedExpiredHolds } from './lazy-expiry';
import { type Instant, givenBack } from './holds';
import { locationsKnowing } from './location-services';
import { type Location, allLocationsOf } from './locations';
import { eligibleAmong, planLineMoves } from './routing';
import { movedPart } from './split-lines';
import type { BatchRepository, HoldToEnd } from './ports';
import { MAX_BATCH_ROUNDS, asFoundNow, batchOrThrow } from './services';

/*
 * A change of a batch's qty or eta (docs/api.md, PATCH /batches/{ref}): the holds it ends, the change
 * written, then the lines it leaves no room for moved off, each by the rule for one line.
 */

/**
 * Rounds of a change of a batch that ends holds, in all: a round that ends holds on their own before
 * the change ends a transaction's worth (about 95 single-line holds), so this ends thousands; past
 * it, a 503 asks for the repeat that continues.
 */
const MAX_CHANGE_ROUNDS = 32;

/** Lines read at a time from a batch that shrank: enough for most batches in one read. */
const LINES_READ_AT_ONCE = 100;

export interface BatchChangeOutcome {
  readonly batch: Batch;
  /** The lines this call moved; a repeat that finishes an earlier, cut-off change lists only its own. */
  readonly reallocated: Reallocation[];
}

/**
 * Changes a batch's qty and/or eta, then, while it holds more than its new qty, takes lines off it,
 * most recently allocated first, each allocated again by the normal rule or removed from its order.
 * The change is written first and the batch keeps it: a batch whose `available` is below zero has
 * lines still to move, so repeating the same change finishes the job (and, with nothing left to
 * move, answers an empty `reallocated`). Each write of moves is one transaction, so every state in
 * between keeps the invariant; the deadline bounds one call, and a 503 asks for the repeat that continues.
 */
export const changeBatch = (ref: string, change: BatchChange, repository: BatchRepository): Promise<BatchChangeOutcome> =>
  changeBatchAs(ref, async () => ({ change }), repository);

/**
 * What a round's read of a batch makes of a request to change it: the change, and the adjustment to
 * record in its write (domain/adjustment-services.ts), whose fields may depend on the batch as read.
 */
export type ChangeOf = (batch: Batch) => Promise<{ readonly change: BatchChange; readonly adjustment?: Adjustment; readonly changesRead?: number }>;

/** changeBatch, the change made of each round's read of the batch (ChangeOf). */
export const changeBatchAs = async (ref: string, changeOf: ChangeOf, repository: BatchRepository): Promise<BatchChangeOutcome> =>
  movedUntilItFits(await applyChange(ref, changeOf, repository), repository);

/**
 * A change already written, finished: the lines its batch holds past its qty (a change cut off before
 * it moved them all) moved off, as the change would have. Answers the lines this call moved.
 */
export const finishChange = async (ref: string, repository: BatchRepository): Promise<BatchChangeOutcome> =>
  movedUntilItFits(await batchOrThrow(ref, repository), repository);

/** While the batch holds more than its qty, its newest lines moved off, each round read again. */
const movedUntilItFits = async (changed: Batch, repository: BatchRepository): Promise<BatchChangeOutcome> => {
  let batch = changed;
  const { ref } = batch;
  const reallocated: Reallocation[] = [];
  let fruitlessRounds = 0;
  while (batch.available < 0) {
    const moved = await moveLinesOff(batch, repository);
    reallocated.push(...moved);
    fruitlessRounds = moved.length > 0 ? 0 : fruitlessRounds + 1;
    if (fruitlessRounds >= MAX_BATCH_ROUNDS) throw new BatchContended(ref, fruitlessRounds);
    batch = await batchOrThrow(ref, repository, batch.sku);
  }
  const [now] = await asFoundNow([batch], repository);
  return { batch: now as Batch, reallocated };
};

/**
 * A change that leaves the batch fewer units than its lines and holds take ends holds first
 * (holdsToEnd): a hold is a checkout's pending claim, an order's line a promise made. So a batch
 * whose lines the change leaves to move holds none, and each hold on it ends whole, once, in the
 * change's own write (a change cut off has ended none of them), but for holds too many for that
 * write (endedBeforeTheChange). Rounds that lose a race, and rounds in all, are bounded: holds placed
 * as fast as this ends them would otherwise keep it going until its deadline.
 */
const applyChange = async (ref: string, changeOf: ChangeOf, repository: BatchRepository): Promise<Batch> => {
  let lostRounds = 0;
  for (let round = 0; round < MAX_CHANGE_ROUNDS && lostRounds < MAX_BATCH_ROUNDS; round++) {
    const batch = await batchOrThrow(ref, repository);
    const { change, adjustment, changesRead } = await changeOf(batch);
    const changed = changedBatch(batch, change);
    // An adjustment is recorded even when it changes nothing: its id is used, and a count's time stands.
    if (isSameBatch(changed, batch) && !adjustment) return batch;
    const now = repository.currentTime();
    const ending = changed.available < 0 && heldOf(batch) > 0 ? await holdsToEnd(batch, -changed.available, now, repository) : [];
    if (ending) {
      const endingHere = ending.flatMap(({ hold }) => hold.lines.filter(({ batchref }) => batchref === ref).map(({ qty }) => ({ holdid: hold.holdid, qty, expiresAt: hold.expiresAt })));
      // Holds that hold more here than the batch as read counts were placed since that read (units a
      // cancel gave back meanwhile, taken again, leave `available` as read): read the batch again, so
      // that the change takes their units off the count it writes.
      if (endingHere.reduce((sum, { qty }) => sum + qty, 0) > heldOf(batch)) {
        lostRounds++;
        continue;
      }
      const withChange = givenBack(changed, endingHere);
      const written = await repository.changeBatch(batch, withChange, ending, now, adjustment, changesRead);
      if (written.outcome === 'saved') return withChange;
      if (written.outcome === 'too-many-holds') {
        lostRounds = (await endedBeforeTheChange(ref, ending.slice(0, ending.length - written.fitting), now, repository)) ? 0 : lostRounds + 1;
        continue;
      }
    }
    lostRounds++;
  }
  throw new BatchContended(ref, lostRounds);
};

/**
 * Holds too many to end in the change's own write: these, the first (expired ones first, then active
 * ones, latest expiry first), end each in a write of its own before it, one after another (each
 * writes the batch being changed, where writes at once would only meet), and the change, read
 * again, ends the rest with it. Cut off between the two, these holds have ended and the qty is not
 * yet changed: the same change again finishes the job. Whether any of them ended.
 */
const endedBeforeTheChange = async (ref: string, ending: readonly HoldToEnd[], now: Instant, repository: BatchRepository): Promise<boolean> => {
  let ended = false;
  for (const { hold, ending: how, givenBackOn } of ending) {
    if ((await repository.endHold(hold, how, now, [ref, ...givenBackOn])) === 'saved') ended = true;
  }
  return ended;
};

/**
 * One pass over the newest lines of a batch that holds more than its qty, newest first: each whole
 * line taken off goes to the batch the rule for one line picks among the SKU's others at the
 * locations its recorded routing allows now, or leaves its order (planLineMoves), planned against
 * one read (the SKU's stock and the locations) and written in order, as many moves to a write as the
 * store takes; each part of a split line taken off moves by its line's rule, to one batch or
 * several, a write of its own (movePartOff), in its place among them. Stops at the first write that finds something changed,
 * for the caller to read again.
 */
const moveLinesOff = async (shrunk: Batch, repository: BatchRepository): Promise<Reallocation[]> => {
  const lines = linesToTakeOff(shrunk, await repository.linesOn(shrunk.ref, LINES_READ_AT_ONCE));
  if (lines.length === 0) return [];
  // Settled: a line that no batch as read can take leaves its order (BatchRepository.stockOf).
  const [stock, routingLocations] = await Promise.all([repository.stockOf(shrunk.sku, { settled: true }), repository.routingLocations()]);
  let { batches } = stock;
  // Lazy expiry: the lines may need the units of holds expired on any other batch, as many as they
  // take in all (domain/holds.ts). One give-back frees as many holds as one write carries, so until
  // none is left to free: a line planned out of its order while units behind expired holds are not
  // yet back would leave it with stock there. Rounds that keep freeing move nothing this pass (the
  // caller's rounds bound them, then a 503 asks for the repeat that continues).
  const moving = lines.reduce((sum, { qty }) => sum + qty, 0);
  let freeing = 0;
  const expiry = new LazyExpiry();
  while (expiry.readAgain(await freedExpiredHolds(moving, batches.filter(({ ref }) => ref !== shrunk.ref), undefined, repository))) {
    if (++freeing >= MAX_BATCH_ROUNDS) return [];
    ({ batches } = await repository.stockOf(shrunk.sku, { settled: true }));
  }
  // A line names no location but the one of the batch it is on, `shrunk`'s: read anew, as any batch's, if the process does not know it.
  const locations = await locationsKnowing(routingLocations, [shrunk, ...batches], {}, repository);
  let from = shrunk;
  const moved: Reallocation[] = [];
  // Newest first throughout: each run of whole lines planned and written together, each part between them on its own.
  for (let start = 0; start < lines.length; ) {
    if (lines[start]?.isPart) {
      const partMoved = await movePartOff(from, lines[start] as ListedLine, batches, locations, repository);
      if (partMoved === 'changed') return moved;
      if (partMoved !== 'gone') {
        moved.push(...partMoved.moved);
        ({ from, batches } = partMoved);
      }
      start++;
      continue;
    }
    const end = lines.findIndex((line, index) => index > start && line.isPart);
    const whole = lines.slice(start, end === -1 ? lines.length : end);
    let pending = planLineMoves(from, whole, batches, locations);
    while (pending.length > 0) {
      const result = await repository.moveAllocations(from, pending, batches);
      if (result.outcome === 'changed') return moved;
      const written = pending.slice(0, result.moved);
      moved.push(...written.map(({ line: { orderid, sku, qty }, to }) => ({ orderid, sku, qty, from: shrunk.ref, batchref: to })));
      ({ from, batches } = afterMoves(from, batches, written));
      pending = pending.slice(result.moved);
    }
    start += whole.length;
  }
  return moved;
};

/**
 * Moves the part of a split line listed on `from` off it, its units placed again by the line's rule
 * for them (movedPart), on one batch or several, or takes the whole line out of its order when no
 * way its split allows holds them: one write. `moved` lists a move to each batch the units went to,
 * with the units it took, in the order of the preference; a line that left, with its whole qty.
 * `gone` when the line has no part on `from` now (the index listed it a moment late), `changed`
 * when the write found the line or a batch changed since read, for the caller to read again.
 */
const movePartOff = async (
  from: Batch,
  listed: ListedLine,
  batches: readonly Batch[],
  locations: readonly Location[],
  repository: BatchRepository,
): Promise<{ readonly moved: Reallocation[]; readonly from: Batch; readonly batches: Batch[] } | 'gone' | 'changed'> => {
  const line = await repository.allocationOf(listed.orderid, listed.sku);
  const part = line?.split?.parts.find(({ batchref }) => batchref === from.ref);
  if (!line || !part) return 'gone';
  const to = movedPart(line, part, batches, eligibleAmong(allLocationsOf(locations), line.routing ?? {}));
  const otherParts = partsOf(line).filter(({ batchref }) => batchref !== from.ref);
  // Leaving its order, the line gives every part back: the batches of the others are read, wherever their stock puts them.
  const others = to ? [] : await Promise.all(otherParts.map(({ batchref }) => batches.find(({ ref }) => ref === batchref) ?? batchOrThrow(batchref, repository, line.sku)));
  if ((await repository.moveLinePart(line, from, to ?? null, others)) !== 'saved') return 'changed';
  const { orderid, sku } = line;
  const given = (batch: Batch) =>
    to ? -(to.find((placed) => placed.batch.ref === batch.ref)?.qty ?? 0) : (otherParts.find(({ batchref }) => batchref === batch.ref)?.qty ?? 0);
  // A line leaving gives its other parts' batches units, those read out of the stock range among them: the next move may take them.
  const known = [...batches, ...others.filter(({ ref }) => !batches.some((batch) => batch.ref === ref))];
  return {
    moved: to ? to.map(({ batch, qty }) => ({ orderid, sku, qty, from: from.ref, batchref: batch.ref })) : [{ orderid, sku, qty: line.qty, from: from.ref, batchref: null }],
    from: { ...from, available: from.available + part.qty },
    batches: known.map((batch) => (given(batch) === 0 ? batch : { ...batch, available: batch.available + given(batch) })),
  };
};
