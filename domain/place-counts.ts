/*
 * A count at a place (docs/api.md, "Imports", "A count at a place"): how many units of a SKU were
 * on the shelves of a place at a moment, which the rules spread over the SKU's batches in stock
 * there, each batch then counted as a count of one batch is (as of that moment, with what changed
 * it since on top).
 */

/** The most batches a count at a place changes: its plan is one item of the store, which holds so many. */
export const MAX_PLACE_COUNT_BATCHES = 500;

/** A batch a count at a place may change, as read: its units now, those free (on no line, in no hold), and those it had at the count's moment. */
export interface CountedBatch {
  readonly ref: string;
  readonly qty: number;
  readonly available: number;
  /** Its units at the count's moment: its qty less what changed it since (never below 0). */
  readonly asOf: number;
}

/** The count of one batch that a count at a place makes: `qty`, as of the place's count. */
export interface BatchCount {
  readonly ref: string;
  readonly qty: number;
}

/**
 * What a count at a place makes of its batches: the count of each batch whose units it changes
 * (none when the place held what its batches say). The batches are taken in one order, those with
 * the most units free first (then by ref), so that what a count takes off moves the fewest lines:
 * a shortfall is taken from the first, as much as it had at the count's moment and has now, then
 * from the next; a surplus is all added to the first. A shortfall the batches cannot give (units
 * they had then have left since) is taken as far as they can.
 */
export const placeCountOf = (onHand: number, batches: readonly CountedBatch[]): BatchCount[] => {
  const ordered = [...batches].sort((a, b) => b.available - a.available || (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
  const counted = ordered.reduce((sum, { asOf }) => sum + asOf, 0);
  const [first] = ordered;
  if (onHand === counted || !first) return [];
  if (onHand > counted) return [{ ref: first.ref, qty: first.asOf + onHand - counted }];
  let short = counted - onHand;
  const counts: BatchCount[] = [];
  for (const { ref, qty, asOf } of ordered) {
    const taken = Math.min(short, asOf, qty);
    if (taken > 0) counts.push({ ref, qty: asOf - taken });
    short -= taken;
    if (short === 0) break;
  }
  return counts;
};
