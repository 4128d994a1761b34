import { AllocationContended, HoldConflict, HoldContended, HoldNotFound, HoldNotPlaced, TooManyParts } from './errors';
import { type HeldLine, type HeldUnits, type Hold, type HoldStatus, type Instant, expiryAfter, hasExpired, linesOfHold, requestedLines, statusAt } from './holds';
import { routedStockOf } from './location-services';
import { DEFAULT_LOCATION_ID } from './locations';
import { type Allocation, type Batch, type Order, type Placement, type RoutedAllocation, type Split, heldOf, locationOf } from './model';
import { planOrder } from './order-plans';
import { type Routing, isSameRouting, recordedRouting } from './routing';
import type { BatchRepository, ConditionalWrite, ExpiredHoldsCursor, HoldEnding, HoldToEnd, StockRead } from './ports';
import { LazyExpiry, freedForLines, linesPassOverSpread, picksOf } from './lazy-expiry';

/*
 * Holds through checkout (docs/api.md, "Holds"). Every change of a hold is one transaction guarded
 * by the hold's record as read, so whatever races end a hold (release, confirm, expiry, a batch
 * that shrinks), exactly one of them does, and its units go back to their batches, or to an
 * order's lines, once.
 */

export interface HoldRequest {
  readonly holdid: string;
  /** Each line with how far it may be split: the hold's `split` when absent. */
  readonly lines: Order['lines'];
  readonly ttlSeconds: number;
  /** How far each line that names no `split` of its own may be split: `none` when absent. */
  readonly split?: Split;
}

/** A hold as a client reads it, each line naming its batch's location. */
export interface LocatedHold extends Hold {
  readonly lines: readonly (HeldLine & { readonly location: string })[];
}

/** A hold as a client reads it: its status at the moment it was read. */
export interface HoldOutcome {
  readonly hold: LocatedHold;
  /** False for a repeat of a hold already placed, answered without holding more. */
  readonly created: boolean;
}

/** Rounds of read and conditional write before giving up with a 503; each lost round means another request got there first. */
const MAX_HOLD_ROUNDS = 8;

/**
 * Holds every line in one batch, or in parts as far as its `split` allows, or none, the lines planned
 * at once as an order's are (planOrder, among the batches the request may take from): one read round
 * (the hold's record, each SKU's stock, and the locations when the process's are stale) and one
 * transaction. The hold records the routing its request named, and each line its batch's location;
 * a split line is recorded as its parts (HeldLine.split). A repeat with the same lines, routing and
 * splits while the hold is active answers it as it is, without extending it; a holdid is used once.
 */
export const placeHold = async (request: HoldRequest, repository: BatchRepository, routing: Routing = {}): Promise<HoldOutcome> => {
  const { holdid, ttlSeconds } = request;
  const lines = request.lines.map(({ sku, qty, split = request.split ?? 'none' }) => ({ sku, qty, split }));
  let read: StockRead = { forTake: true };
  const expiry = new LazyExpiry();
  for (let round = 0; round < MAX_HOLD_ROUNDS; round++) {
    const [existing, locations, ...stocks] = await Promise.all([
      repository.hold(holdid),
      repository.routingLocations(),
      ...lines.map(({ sku }) => repository.stockOf(sku, read)),
    ]);
    const now = repository.currentTime();
    if (existing && !(await settledAsEnded(existing, now, repository))) continue;
    if (existing) return answerRepeat(existing, lines, routing, now, repository);
    const { stockBySku, eligibility } = await routedStockOf(lines, stocks, locations, routing, repository);
    const plan = planOrder(holdid, lines, stockBySku, eligibility);
    const picks = picksOf(holdid, lines, stockBySku, eligibility, plan);
    if (expiry.readAgain(await freedForLines(lines, stockBySku, eligibility, { plan, picks }, repository, expiry))) continue;
    if (!read.settled && linesPassOverSpread(lines, stockBySku, eligibility, { plan, picks })) {
      read = { settled: true };
      continue;
    }
    // Its stock read after a copy of the same hold committed, its read of the hold before: the next round answers it as a repeat.
    if (plan.kind === 'refused' && (await repository.hold(holdid))) continue;
    if (plan.kind === 'refused') throw new HoldNotPlaced(holdid, plan.refusals, eligibility.noneBecause);
    const placements = plan.placements.flatMap(heldPlacements);
    const hold: LocatedHold = {
      holdid,
      lines: bySku(placements.map(({ line }) => line)),
      status: 'active',
      expiresAt: expiryAfter(now, ttlSeconds),
      ...recordedRouting(routing),
    };
    const result = await repository.saveHold(hold, placements);
    if (result.outcome === 'saved') return { hold, created: true };
    // Split lines whose parts, placed or confirmed, need more writes than one transaction holds.
    if (result.outcome === 'too-many-writes') throw new TooManyParts('hold', holdid, result.writes, result.maxWrites);
    // Placed a moment ago by another request: read again, it is answered as a repeat.
    if (result.outcome === 'hold-exists') continue;
  }
  throw new AllocationContended(lines.map(({ sku }) => sku).join(', '), MAX_HOLD_ROUNDS);
};

/** The hold's lines a placement makes: a whole line on its batch, or a split line's parts, each on its own, named as parts. */
const heldPlacements = ({ allocation: { sku, qty, batchref, split }, batch, parts }: Placement): { line: HeldLine & { readonly location: string }; batch: Batch }[] =>
  split && parts
    ? parts.map((part) => ({ line: { sku, qty: part.qty, batchref: part.batch.ref, location: locationOf(part.batch), split: split.split }, batch: part.batch }))
    : [{ line: { sku, qty, batchref, location: locationOf(batch) }, batch }];

const answerRepeat = async (
  existing: Hold,
  lines: readonly { readonly sku: string; readonly qty: number; readonly split: Split }[],
  routing: Routing,
  now: Instant,
  repository: BatchRepository,
): Promise<HoldOutcome> => {
  const status = statusAt(existing, now);
  if (status !== 'active') throw new HoldConflict(existing.holdid, 'hold_ended', `has ended (${status}): a holdid is used once`);
  const asked = new Map(lines.map((line) => [line.sku, line]));
  const held = requestedLines(existing.lines);
  const same = held.length === asked.size && held.every(({ sku, qty }) => asked.get(sku)?.qty === qty);
  if (!same) throw new HoldConflict(existing.holdid, 'hold_exists', 'already exists with other lines');
  if (!isSameRouting(existing.routing, routing)) throw new HoldConflict(existing.holdid, 'routed_otherwise', 'already exists with another destination or location');
  if (held.some(({ sku, split }) => asked.get(sku)?.split !== split)) throw new HoldConflict(existing.holdid, 'split_otherwise', 'already exists with another split');
  return { hold: await withLocations(existing, repository), created: false };
};

/**
 * The hold, each line naming its batch's location: a hold placed before holds recorded it has its
 * batches read for it, those of its lines that do not name one; a batch gone since (a transfer's
 * incoming batch, cancelled) reads as at `default`, as that hold's events say.
 */
const withLocations = async (hold: Hold, repository: BatchRepository): Promise<LocatedHold> => {
  const lines = await Promise.all(
    hold.lines.map(async ({ location, ...line }) => {
      if (location !== undefined) return { ...line, location };
      const batch = await repository.batch(line.batchref, line.sku);
      return { ...line, location: batch ? locationOf(batch) : DEFAULT_LOCATION_ID };
    }),
  );
  return { ...hold, lines };
};

/** The hold with its status as of now, and its lines' locations: an active hold whose time has passed reads expired. */
export const holdStatus = async (holdid: string, repository: BatchRepository): Promise<LocatedHold> => {
  const hold = await withLocations(await holdOrThrow(holdid, repository), repository);
  return { ...hold, status: statusAt(hold, repository.currentTime()) };
};

/** Sets an active hold's expiry to now + `ttlSeconds`, on its record and its batches in one transaction; answers it with its lines' locations. */
export const extendHold = async (holdid: string, ttlSeconds: number, repository: BatchRepository): Promise<LocatedHold> => {
  for (let round = 0; round < MAX_HOLD_ROUNDS; round++) {
    const hold = await holdOrThrow(holdid, repository);
    const now = repository.currentTime();
    const status = statusAt(hold, now);
    if (status !== 'active') {
      if (!(await settledAsEnded(hold, now, repository))) continue;
      throw new HoldConflict(holdid, 'hold_ended', `${endedAs(status, hold)}: only an active hold can be extended`);
    }
    const expiresAt = expiryAfter(now, ttlSeconds);
    if ((await repository.extendHold(hold, expiresAt, now)) === 'saved') return withLocations({ ...hold, expiresAt }, repository);
  }
  throw new HoldContended(holdid, MAX_HOLD_ROUNDS);
};

/**
 * Gives an active hold's units back at once. A hold already released or expired is a repeat, and
 * one whose time has passed is ended as expired here rather than waiting for the sweeper. A
 * confirmed hold's units are an order's lines: those are cancelled line by line. How it ended, or
 * `repeat` when it already had.
 */
export const releaseHold = async (holdid: string, repository: BatchRepository): Promise<HoldEnding | 'repeat'> => {
  for (let round = 0; round < MAX_HOLD_ROUNDS; round++) {
    const hold = await holdOrThrow(holdid, repository);
    if (hold.status === 'confirmed') throw new HoldConflict(holdid, 'hold_ended', `${endedAs('confirmed', hold)}: cancel the order's lines instead`);
    if (hold.status !== 'active') return 'repeat';
    const now = repository.currentTime();
    const ending = hasExpired(hold.expiresAt, now) ? 'expired' : 'released';
    if ((await endHold(hold, ending, now, repository)) === 'saved') return ending;
  }
  throw new HoldContended(holdid, MAX_HOLD_ROUNDS);
};

/**
 * Ends an active hold whose time has passed, as the sweeper does, giving back its units still on
 * their batches. False when the hold was no longer active and expired: something else ended it.
 */
export const endExpiredHold = async (holdid: string, repository: BatchRepository): Promise<boolean> => {
  for (let round = 0; round < MAX_HOLD_ROUNDS; round++) {
    const hold = await repository.hold(holdid);
    const now = repository.currentTime();
    if (hold?.status !== 'active' || !hasExpired(hold.expiresAt, now)) return false;
    if ((await endHold(hold, 'expired', now, repository)) === 'saved') return true;
  }
  throw new HoldContended(holdid, MAX_HOLD_ROUNDS);
};

/**
 * Ends the hold, as read, giving back its units on every batch: the one-transaction path. Once its
 * time has passed a request may have given its units back on some batch already (lazy expiry), so
 * when that write finds them gone, it gives them back where they are still recorded.
 */
const endHold = async (hold: Hold, ending: HoldEnding, now: Instant, repository: BatchRepository): Promise<ConditionalWrite> => {
  const everyBatch = hold.lines.map(({ batchref }) => batchref);
  if ((await repository.endHold(hold, ending, now, everyBatch)) === 'saved') return 'saved';
  if (!hasExpired(hold.expiresAt, now)) return 'changed';
  return repository.endHold(hold, ending, now, await repository.stillHeldOn(hold));
};

/** Holds' units read from a batch at a time, for a change that ends holds: more than one write ends. */
const HOLDS_READ_AT_ONCE = 200;

/**
 * The holds recorded on a batch that a change of its qty ends for the batch to lose `deficit` units:
 * every expired one, then active ones, latest expiry first, each whole, on all its batches; read at
 * `now`, for the change's own write (BatchRepository.changeBatch). Undefined when one of them is no
 * longer active (it ended since the batch was read), or when the holds found free fewer units than
 * the batch as read holds for the change to free: those it read have ended since, and others may
 * hold its units now, which the batch's condition cannot tell from them (a hold given back and
 * another of as many units placed leave it as read). The caller reads the batch again.
 */
export const holdsToEnd = async (batch: Batch, deficit: number, now: Instant, repository: BatchRepository): Promise<HoldToEnd[] | undefined> => {
  const [expired, latestFirst] = await Promise.all([
    repository.heldOn(batch, { expiredBy: now }, HOLDS_READ_AT_ONCE),
    repository.heldOn(batch, { latestFirst: true }, HOLDS_READ_AT_ONCE),
  ]);
  const ending: HeldUnits[] = [...expired];
  let freed = expired.reduce((sum, { qty }) => sum + qty, 0);
  for (const units of latestFirst.filter(({ expiresAt }) => !hasExpired(expiresAt, now))) {
    if (freed >= deficit) break;
    ending.push(units);
    freed += units.qty;
  }
  // A read cut at a page finds fewer than the batch holds by design: those holds end apart first (too-many-holds).
  const readWhole = expired.length < HOLDS_READ_AT_ONCE && latestFirst.length < HOLDS_READ_AT_ONCE;
  if (readWhole && freed < Math.min(deficit, heldOf(batch))) return undefined;
  // Read at once: a change that ends hundreds of holds would otherwise wait for each in turn.
  const toEnd = await Promise.all(ending.map(({ holdid }) => holdToEnd(holdid, batch, now, repository)));
  return toEnd.every((found) => found !== undefined) ? toEnd : undefined;
};

/** The hold as a change of `batch` ends it: undefined when it is no longer active. */
const holdToEnd = async (holdid: string, batch: Batch, now: Instant, repository: BatchRepository): Promise<HoldToEnd | undefined> => {
  const hold = await repository.hold(holdid);
  if (hold?.status !== 'active') return undefined;
  const others = hold.lines.filter(({ batchref }) => batchref !== batch.ref).map(({ batchref }) => batchref);
  // Only lazy expiry gives a hold's units back without ending it, and only once it has expired.
  if (!hasExpired(hold.expiresAt, now)) return { hold, ending: 'released', givenBackOn: others };
  const stillHeld = await repository.stillHeldOn(hold);
  return { hold, ending: 'expired', givenBackOn: others.filter((ref) => stillHeld.includes(ref)) };
};

/** A hold still active this long after it expired is overdue: the sweeper has fallen behind (its alarm). */
export const OVERDUE_AFTER_MS = 5 * 60_000;

/** Holds read, and ended concurrently, at a time. */
const SWEEP_PAGE = 100;
const SWEEP_CONCURRENCY = 8;

export interface Sweep {
  readonly ended: number;
  /** Holds it failed to end (the store kept refusing, or the hold kept changing): the next sweep tries again. */
  readonly failed: number;
  /** Holds still active OVERDUE_AFTER_MS after they expired, once it was done (up to a page of them). */
  readonly overdue: number;
  /** It stopped at its deadline with holds left to try (a backlog, or a store slow to answer): the next sweep goes on. */
  readonly stoppedAtDeadline: boolean;
}

/**
 * Ends every hold whose time had passed when it started, page by page, earliest first, until
 * `deadline` aborts, and then counts the overdue ones left. Each hold listed is tried once: one that
 * cannot be ended (the store kept refusing, or the hold kept changing), or that something else ended
 * a moment ago while the index still lists it, holds back none of the holds after it, and the next
 * sweep tries it again. The holds are read and ended through `repository` bound to `deadline`, so a
 * call still in flight then is abandoned too (its hold is neither ended nor failed: the next sweep
 * tries it); the overdue ones are counted through `repository` itself, whose own deadline, if any,
 * must come later.
 */
export const sweepExpiredHolds = async (repository: BatchRepository, deadline?: AbortSignal): Promise<Sweep> => {
  const ending = deadline ? repository.withDeadline(deadline) : repository;
  let stoppedAtDeadline = false;
  const outOfTime = () => (stoppedAtDeadline ||= deadline?.aborted === true);
  const before = repository.currentTime();
  let ended = 0;
  let failed = 0;
  try {
    let from: ExpiredHoldsCursor | undefined;
    do {
      const page = await ending.expiredHolds(before, SWEEP_PAGE, from);
      for (let start = 0; start < page.holdids.length && !outOfTime(); start += SWEEP_CONCURRENCY) {
        const tried = page.holdids.slice(start, start + SWEEP_CONCURRENCY);
        const results = await Promise.allSettled(tried.map((holdid) => endExpiredHold(holdid, ending)));
        ended += results.filter((result) => result.status === 'fulfilled' && result.value).length;
        if (!outOfTime()) failed += results.filter((result) => result.status === 'rejected').length;
      }
      from = page.next;
    } while (from && !outOfTime());
  } catch (error) {
    // A page's read that the deadline cut off ends the sweep like the deadline itself; anything else fails it.
    if (!outOfTime()) throw error;
  }
  const overdue = (await repository.expiredHolds(repository.currentTime() - OVERDUE_AFTER_MS, SWEEP_PAGE)).holdids.length;
  return { ended, failed, overdue, stoppedAtDeadline };
};

export interface ConfirmOutcome {
  /** The order's new lines: the hold's, sorted by sku, each with its batch's location. */
  readonly lines: RoutedAllocation[];
  /** False for a repeat of a confirm already made to this order. */
  readonly created: boolean;
}

/**
 * Turns an active hold's lines into the order's, on the same batches (a split line onto the same
 * parts), in one transaction: they take exactly the held units and never compete for stock again,
 * and record the hold's routing. A
 * confirm that empties a batch takes a second round, which reads the batches to move them out of
 * the stock range.
 */
export const confirmHold = async (holdid: string, orderid: string, repository: BatchRepository): Promise<ConfirmOutcome> => {
  let batches: readonly Batch[] | undefined;
  for (let round = 0; round < MAX_HOLD_ROUNDS; round++) {
    // Each line with its location, read for a hold placed before holds recorded it: the order's lines record it too.
    const hold = await withLocations(await holdOrThrow(holdid, repository), repository);
    const lines = linesOfHold(hold, orderid);
    const now = repository.currentTime();
    const status = statusAt(hold, now);
    if (status === 'confirmed' && hold.orderid === orderid) return { lines, created: false };
    if (status !== 'active') {
      if (!(await settledAsEnded(hold, now, repository))) continue;
      throw new HoldConflict(holdid, 'hold_ended', `${endedAs(status, hold)}: only an active hold can be confirmed`);
    }
    const result = await repository.confirmHold(hold, orderid, now, batches);
    if (result.outcome === 'saved') return { lines, created: true };
    // Another confirm to this order may have written those lines a moment ago: then the hold, read again, says so.
    if (result.outcome === 'lines-exist' && !isAsRead(await repository.hold(holdid), hold)) continue;
    if (result.outcome === 'lines-exist') {
      const skus = bySku(result.existing).map(({ sku }) => sku);
      throw new HoldConflict(holdid, 'line_exists', `cannot be confirmed: order ${orderid} already has a line for sku ${skus.join(', ')}`);
    }
    batches = (await batchesOf(hold, repository)).filter((batch) => batch !== undefined);
  }
  throw new HoldContended(holdid, MAX_HOLD_ROUNDS);
};

/**
 * Before a request answers that a hold has expired, the hold is ended as expired if its record still
 * says active: otherwise a release or a confirm in flight from before its expiry, judged at that
 * earlier moment, could still end it otherwise after the answer said it had expired. False when the
 * hold changed first, for the caller to read it again.
 */
const settledAsEnded = async (hold: Hold, now: Instant, repository: BatchRepository): Promise<boolean> =>
  hold.status !== 'active' || !hasExpired(hold.expiresAt, now) || (await endHold(hold, 'expired', now, repository)) === 'saved';

const isAsRead = (found: Hold | undefined, hold: Hold): boolean => found?.status === hold.status && found.expiresAt === hold.expiresAt;

/** The batches of the hold's lines, as of now, each read at its SKU's keys. */
const batchesOf = (hold: Hold, repository: BatchRepository): Promise<(Batch | undefined)[]> =>
  Promise.all(hold.lines.map(({ batchref, sku }) => repository.batch(batchref, sku)));

/** How a hold that is not active came to end, for the 409 that says so. */
const endedAs = (status: HoldStatus, hold: Hold): string => {
  if (status === 'confirmed') return `was confirmed to order ${hold.orderid}`;
  if (status === 'released') return 'was released';
  return 'has expired';
};

const holdOrThrow = async (holdid: string, repository: BatchRepository): Promise<Hold> => {
  const hold = await repository.hold(holdid);
  if (!hold) throw new HoldNotFound(holdid);
  return hold;
};

const bySku = <Line extends HeldLine | Allocation>(lines: Line[]): Line[] => lines.sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0));
