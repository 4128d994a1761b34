import type { Chance } from './chance';
import { type Draft, type Episode, type Places, type StartingBatch, type Step, inTurn, twice } from './workload-steps';
import { ORDERS, HOLDS, TRANSFERS, COUNTRIES, SHIPMENT_ETAS, TRANSFER_ETA, placedAsPromised, addBatch } from './workload-draws';

/**
 * Episodes: a few requests in an order that builds a state some races need and that a few dozen
 * independent draws seldom build: a line sent to a transfer's destination while the transfer is
 * cancelled (it can only take the incoming batch), a source left owing its lines before its
 * transfer is cancelled, a transfer of all its source had sent twice while lines take from the
 * source, an incoming batch received, taken from, made a shipment again and cancelled, and lines
 * racing for a batch whose hold has just expired.
 */

const inStockBatches = ({ batches }: Places) => batches.filter(({ eta }) => eta === null);

/** Whether a batch is the only one of its SKU where it is: a line routed there can move nowhere else. */
const aloneWhereItIs = ({ batches }: Places, batch: StartingBatch) => !batches.some((other) => other !== batch && other.sku === batch.sku && other.location === batch.location);

const transferEpisode =
  (
    steps: (chance: Chance, places: Places, at: number, made: { readonly transferid: string; readonly source: StartingBatch; readonly to: string }) => Step[],
    prefer: (places: Places, batch: StartingBatch) => boolean = () => true,
  ): Episode =>
  (chance, places, at) => {
    const sources = inStockBatches(places);
    if (sources.length === 0 || places.locations.length < 2) return [];
    const preferred = sources.filter((batch) => prefer(places, batch));
    const source = chance.pick(preferred.length > 0 ? preferred : sources);
    const elsewhere = places.locations.filter((id) => id !== source.location);
    // Where no batch of the SKU is, if there is such a place: a line sent there can only take the incoming batch.
    const bare = elsewhere.filter((id) => !places.batches.some(({ sku, location }) => sku === source.sku && location === id));
    const to = chance.pick(bare.length > 0 ? bare : elsewhere);
    const transferid = chance.pick(TRANSFERS);
    // Both places opened first (a run's other requests may close them): the episode's first steps wait for it.
    const opened = inTurn(
      chance,
      at,
      [source.location, to].map((id): Draft => ({ kind: 'http', routeKey: 'PUT /locations/{id}', path: { id }, body: { name: id, priority: chance.int(0, 3), serves: ['*'] } })),
    );
    const last = opened.at(-1) as Step;
    // Each step made anew, in order, so that those after it name the new one.
    const renewed = new Map<Step, Step>();
    for (const step of steps(chance, places, last.at + 1, { transferid, source, to })) {
      renewed.set(step, { ...step, after: step.after ? (renewed.get(step.after) ?? step.after) : last });
    }
    return [...opened, ...renewed.values()];
  };

const cancelOf = (transferid: string): Draft => ({ kind: 'http', routeKey: 'DELETE /transfers/{transferid}', path: { transferid } });
const transferOf = (transferid: string, { sku, location }: StartingBatch, qty: number, to: string): Draft => ({
  kind: 'http',
  routeKey: 'POST /transfers',
  body: { transferid, sku, qty, from: location, to, eta: TRANSFER_ETA },
});
const lineAt = (orderid: string, sku: string, qty: number, location: string): Draft => ({ kind: 'http', routeKey: 'POST /allocate', body: { orderid, sku, qty, location } });

/** The most lines an order or a hold may have (docs/api.md). */
const MOST_LINES = 25;
/** Holds on one batch past what a change's own write ends with it (docs/capacity.md): some end apart first. */
const CROWD_HOLDS = 56;
/**
 * The units the small batch of a crowd has when it spreads: a spread leaves eight on the batch's
 * item and makes pieces of one unit of the rest (docs/capacity.md), two of them here.
 */
const CROWD_SMALL_SPREADS_AT = 10;
/** Store calls enough for a wave of a crowd's holds to be placed, a few each, and the small batch's steps beside it. */
const WAVE_STEPS = 150;
/** Store calls enough for a request that failed to be sent again and made. */
const RETRIED_STEPS = 75;
/** The steps after its first send at which a sale's `PATCH` is sent again. */
const SALE_CHANGE_AGAIN = [1, 4, 8, 12] as const;
/** Store calls enough for a sale's lines and holds to be made. */
const SALE_STEPS = 50;

/**
 * A hold of as many lines as a hold may have, each taking all of a batch of its own SKU, then
 * confirmed, and again later: its confirm empties more batches than one write moves out of the
 * stock range, and leaves the last to a write after it; then that batch is changed and its line
 * cancelled.
 */
const wideConfirm: Episode = (chance, _places, at) => {
  // Numbered to sort as they count: a hold's lines are kept in the order of their SKUs, and the confirm leaves the last.
  const batches = Array.from({ length: MOST_LINES }, (_, index) => {
    const number = String(index + 1).padStart(2, '0');
    return { ref: `w${number}`, sku: `sw${number}`, qty: chance.int(1, 2) };
  });
  const holdid = 'hw';
  const steps = inTurn(chance, at, [
    ...batches.map(({ ref, sku, qty }): Draft => ({ kind: 'http', routeKey: 'POST /add_batch', body: { ref, sku, qty, eta: null } })),
    { kind: 'http', routeKey: 'POST /holds', body: { holdid, lines: batches.map(({ sku, qty }) => ({ sku, qty })), ttl_seconds: 900 } },
  ]);
  const held = steps.at(-1) as Step;
  const confirmation: Draft = { kind: 'http', routeKey: 'POST /holds/{holdid}/confirm', path: { holdid }, body: { orderid: 'ow' } };
  const confirm: Step = { at: held.at + 1, draft: confirmation, after: held };
  // Sent again later, as a client does whose hold was placed only when it tried again.
  const confirmLater: Step = { at: held.at + RETRIED_STEPS, draft: confirmation, after: held };
  const last = batches.at(-1) as (typeof batches)[number];
  const afterIt = (draft: Draft): Step => ({ at: confirmLater.at + chance.int(1, 3), draft, after: confirmLater });
  return [
    ...steps,
    ...twice(chance, confirm),
    confirmLater,
    afterIt({ kind: 'http', routeKey: 'PATCH /batches/{ref}', path: { ref: last.ref }, body: { qty: last.qty + chance.int(1, 2) } }),
    afterIt({ kind: 'http', routeKey: 'DELETE /allocations/{orderid}/{sku}', path: { orderid: 'ow', sku: last.sku } }),
  ];
};

/**
 * A crowd of holds on one batch, more than a change's own write ends, then a PATCH that ends them
 * all. Three of them also hold a unit of a small batch: one before anything spreads it (its unit on
 * the batch's item), and one on each of two spreads of it a cooling apart (a `PATCH` gives the small
 * batch a unit, and the second spread's read gathers the first, cooled). The small batch has so few units
 * that each spread makes two pieces of one unit: the holds of the two spreads, each on a piece,
 * bear one number in half the runs, and the change's write, which picks a piece of each spread at
 * random to count on, picks two different ones in half of those. The three
 * last less than the rest, so that the change's own write ends them with the crowd's earliest (the
 * latest to expire end apart first), and that write counts units on the small batch's item and on
 * pieces of its two spreads. The crowd's size, and whether the change empties the batch, are drawn:
 * the write lands at a transaction's last item in some runs and one short of it in others.
 */
const crowdOfHolds: Episode = (chance, _places, at) => {
  const [changed, small] = [{ ref: 'cb', sku: 'sc' }, { ref: 'ch', sku: 'sh' }];
  const crowd = CROWD_HOLDS + chance.int(0, 3);
  const smallHold = (holdid: string, ttlSeconds: number): Draft => ({
    kind: 'http',
    routeKey: 'POST /holds',
    body: { holdid, lines: [{ sku: changed.sku, qty: 1 }, { sku: small.sku, qty: 1 }], ttl_seconds: ttlSeconds },
  });
  const spreadSmall: Draft = { kind: 'spread', sku: small.sku, ref: small.ref };
  const [addChanged, addSmall, beforeSpread, firstSpread, onFirstSpread] = inTurn(chance, at, [
    { kind: 'http', routeKey: 'POST /add_batch', body: { ...changed, qty: crowd + chance.int(3, 5), eta: null } },
    { kind: 'http', routeKey: 'POST /add_batch', body: { ...small, qty: 1 + CROWD_SMALL_SPREADS_AT, eta: null } },
    smallHold('c0', 600),
    spreadSmall,
    smallHold('cs1', 300),
  ]) as [Step, Step, Step, Step, Step];
  const half = Math.floor(crowd / 2);
  const wave = (first: number, count: number, after: Step): Step[] =>
    Array.from({ length: count }, (_, index): Step => ({
      at: after.at + 1,
      draft: { kind: 'http', routeKey: 'POST /holds', body: { holdid: `c${first + index + 1}`, lines: [{ sku: changed.sku, qty: 1 }], ttl_seconds: 900 } },
      after,
    }));
  const firstWave = wave(0, half, beforeSpread);
  // A wave's length of steps on (a run idle before then goes straight to it), and once the hold on the first spread has its answer.
  const cooled: Step = { at: beforeSpread.at + WAVE_STEPS, draft: { kind: 'clock', advanceMs: 180_000 }, after: onFirstSpread };
  // The two holds' units (c0's and cs1's) kept, and as many to spread as the first spread found.
  const secondSpread = inTurn(
    chance,
    cooled.at + 1,
    [{ kind: 'http', routeKey: 'PATCH /batches/{ref}', path: { ref: small.ref }, body: { qty: 2 + CROWD_SMALL_SPREADS_AT } }, spreadSmall, smallHold('cs2', 300)],
    cooled,
  );
  const secondWave = wave(half, crowd - half, cooled);
  const qty = chance.pick([0, 1]);
  // Once the hold on the second spread has its answer, and the second wave has had its steps.
  const change: Step = { at: cooled.at + WAVE_STEPS, draft: { kind: 'http', routeKey: 'PATCH /batches/{ref}', path: { ref: changed.ref }, body: { qty } }, after: secondSpread.at(-1) };
  return [addChanged, addSmall, beforeSpread, firstSpread, onFirstSpread, ...firstWave, cooled, ...secondSpread, ...secondWave, ...twice(chance, change)];
};

/**
 * A batch of its own SKU large enough to spread (a spread leaves eight units on its item and moves
 * the rest to pieces), and lines of a unit sent at once, whose takes meet and spread it while
 * requests that read it whole are in flight.
 */
const saleBatch = (at: number, ref: string, sku: string, qty: number): Step => ({
  at,
  draft: { kind: 'http', routeKey: 'POST /add_batch', body: { ref, sku, qty, eta: null } },
});
const saleLines = (added: Step, sku: string, count: number): Step[] =>
  Array.from({ length: count }, (_, index): Step => ({ at: added.at + 1, draft: plainLine(`p${index + 1}`, sku, 1), after: added }));
const plainLine = (orderid: string, sku: string, qty: number): Draft => ({ kind: 'http', routeKey: 'POST /allocate', body: { orderid, sku, qty } });

/**
 * A sale's batch emptied by a `PATCH` that reads it whole as its lines spread it, every line
 * cancelled once made. Ten units spread into two pieces of one unit; each cancel gives its unit
 * back to the batch's item, so once the pieces' units are taken and every line cancelled, the item
 * holds the ten the `PATCH` read, though the batch is spread.
 */
const saleChanged: Episode = (chance, _places, at) => {
  const added = saleBatch(at, 'sa', 'ss', 10);
  const lines = saleLines(added, 'ss', 4);
  const change: Step = { at: added.at + 1, draft: { kind: 'http', routeKey: 'PATCH /batches/{ref}', path: { ref: 'sa' }, body: { qty: 0 } }, after: added };
  const cancels = lines.map((line): Step => ({ at: line.at + chance.int(1, 4), draft: { kind: 'http', routeKey: 'DELETE /allocations/{orderid}/{sku}', path: { orderid: field(line, 'orderid'), sku: 'ss' } }, after: line }));
  // Sent twice at once, then again over the steps the lines and cancels take: each copy is one more
  // chance to read it whole before it spreads, and to write once the cancels have given its units back.
  const again = SALE_CHANGE_AGAIN.map((later): Step => ({ ...change, at: change.at + later + chance.int(0, 1) }));
  return [added, ...lines, ...twice(chance, change), ...again, ...cancels];
};

/**
 * A batch emptied by a `PATCH` on a read from before its spread. A line takes two of its ten
 * units, and the `PATCH` sizes the batch to that line as it is cancelled, so that, read before the
 * cancel's give-back, it moves the batch out of the stock range as it read it: eight units on its
 * item. The cancel gives the two back, then the batch spreads, which leaves eight on its item again
 * and two in pieces; a `PATCH` whose write comes only then (it met the cancel's or the spread's and
 * backed off, or it was slow to reach the store) finds the item as it read it.
 */
const spreadUnderAChange: Episode = (chance, _places, at) => {
  const added = saleBatch(at, 'ub', 'us', 10);
  const line: Step = { at: added.at + 1, draft: plainLine('u1', 'us', 2), after: added };
  const change: Step = { at: line.at + 1, draft: { kind: 'http', routeKey: 'PATCH /batches/{ref}', path: { ref: 'ub' }, body: { qty: 2 } }, after: line };
  const cancel: Draft = { kind: 'http', routeKey: 'DELETE /allocations/{orderid}/{sku}', path: { orderid: 'u1', sku: 'us' } };
  return [added, line, change, ...inTurn(chance, line.at + 1, [cancel, { kind: 'spread', sku: 'us', ref: 'ub' }], line)];
};

/**
 * A sale's batch spread, its ten units taken by four lines and three holds of two at once, then
 * the holds expired, and lines racing the sweeper for their units: a refusal then must not rest
 * on the pieces read before the sweeper gave a hold's units back and the batch's item after.
 */
const saleHeldOut: Episode = (chance, _places, at) => {
  const added = saleBatch(at, 'sr', 'su', 10);
  const holds = Array.from({ length: 3 }, (_, index): Step => ({
    at: added.at + 1,
    draft: { kind: 'http', routeKey: 'POST /holds', body: { holdid: `sh${index + 1}`, lines: [{ sku: 'su', qty: 2 }], ttl_seconds: 1 } },
    after: added,
  }));
  const lines = saleLines(added, 'su', 4);
  const expired: Step = { at: added.at + SALE_STEPS, draft: { kind: 'clock', advanceMs: 5_000 }, after: holds.at(-1) };
  const racing = (draft: Draft): Step => ({ at: expired.at + chance.int(1, 2), draft, after: expired });
  return [added, ...holds, ...lines, expired, racing({ kind: 'sweep' }), ...['o1', 'o2', 'o3'].map((orderid) => racing(plainLine(orderid, 'su', 1)))];
};

const field = (step: Step, name: string): string => String((step.draft as { body?: Record<string, unknown> }).body?.[name] ?? '');

export const EPISODES: readonly (readonly [Episode, number])[] = [
  [
    // Once the transfer has committed, lines to its destination race its cancel.
    transferEpisode((chance, _places, at, { transferid, source, to }) => {
      const [made] = inTurn(chance, at, [transferOf(transferid, source, chance.int(1, source.qty), to)]) as [Step];
      const racing = made.at + chance.int(0, 2);
      return [
        made,
        { at: racing, draft: lineAt(chance.pick(ORDERS), source.sku, 1, to), after: made },
        { at: racing + chance.int(0, 1), draft: lineAt(chance.pick(ORDERS), source.sku, 1, to), after: made },
        ...twice(chance, { at: racing + chance.int(0, 2), draft: cancelOf(transferid), after: made }),
      ];
    }),
    1,
  ],
  [
    // Lines that can move to no other batch, so that the PATCH leaves the source owing them until
    // its last pass, and the transfer's cancel racing it gives units back to a source owing lines.
    transferEpisode(
      (chance, _places, at, { transferid, source, to }) => {
        const [first, second, made] = inTurn(chance, at, [
          lineAt(chance.pick(ORDERS), source.sku, 1, source.location),
          lineAt(chance.pick(ORDERS), source.sku, 1, source.location),
          transferOf(transferid, source, 1, to),
        ]) as [Step, Step, Step];
        const racing = made.at + 1;
        return [
          first,
          second,
          made,
          { at: racing, draft: { kind: 'http', routeKey: 'PATCH /batches/{ref}', path: { ref: source.ref }, body: { qty: chance.int(0, 1) } }, after: made },
          { at: racing + chance.int(0, 2), draft: cancelOf(transferid), after: made },
        ];
      },
      (places, batch) => batch.qty >= 3 && aloneWhereItIs(places, batch),
    ),
    1,
  ],
  [
    // A transfer of all its source had, sent twice, while a line takes from the source.
    transferEpisode((chance, _places, at, { transferid, source, to }) => [
      ...twice(chance, { at, draft: transferOf(transferid, source, source.qty, to) }),
      { at: at + chance.int(0, 2), draft: lineAt(chance.pick(ORDERS), source.sku, 1, source.location) },
    ]),
    1,
  ],
  [
    // Received, taken from by a transfer onward, made a shipment again with the qty it was made
    // with (as if nothing had happened to it), then both cancelled: the incoming batch is no longer
    // the transfer's to take back.
    transferEpisode((chance, _places, at, { transferid, source, to }) => {
      const onward = chance.pick(TRANSFERS.filter((id) => id !== transferid));
      const qty = Math.max(1, source.qty - 1);
      const [made, received, sentOnward, reshipped] = inTurn(chance, at, [
        transferOf(transferid, source, qty, to),
        { kind: 'http', routeKey: 'PATCH /batches/{ref}', path: { ref: transferid }, body: { eta: null } },
        transferOf(onward, { ...source, location: to }, 1, source.location),
        { kind: 'http', routeKey: 'PATCH /batches/{ref}', path: { ref: transferid }, body: { qty, eta: chance.pick(SHIPMENT_ETAS) } },
      ]) as [Step, Step, Step, Step];
      const cancelled: Step = { at: reshipped.at + 1, draft: cancelOf(transferid), after: reshipped };
      return [made, received, sentOnward, reshipped, ...twice(chance, cancelled), { at: cancelled.at + 1, draft: cancelOf(onward), after: cancelled }];
    }),
    1,
  ],
  [
    (chance, places, at) => {
      // A batch in stock most of which a short hold takes, lines racing for its last unit once the
      // hold has expired, and a shipment of the SKU to fall back to, when the run has one.
      const inStock = inStockBatches(places);
      const withShipment = inStock.filter(({ sku }) => places.batches.some((other) => other.sku === sku && other.eta !== null));
      const batch = chance.pick(withShipment.length > 0 ? withShipment : inStock.length > 0 ? inStock : places.batches);
      const [held, expired] = inTurn(chance, at, [
        { kind: 'http', routeKey: 'POST /holds', body: { holdid: chance.pick(HOLDS), lines: [{ sku: batch.sku, qty: Math.max(1, batch.qty - 1) }], ttl_seconds: 1 } },
        { kind: 'clock', advanceMs: 5_000 },
      ]) as [Step, Step];
      const racing = expired.at + 1;
      return [held, expired, ...Array.from({ length: chance.int(2, 3) }, (): Step => ({ at: racing, draft: lineAt(chance.pick(ORDERS), batch.sku, 1, batch.location), after: held }))];
    },
    1,
  ],
];

/**
 * A cart promised on a SKU of its own, then ordered (or held) as promised: two batches on the shelf and a
 * shipment, a short hold on one of them that expires before the promise (so that the promise counts
 * its units as the order gives them back), and at times a second hold, lasting, or a line of the
 * SKU racing the order. Whole lines and split ones, routed or not.
 */
const promisedCart: Episode = (chance, places, at) => {
  const sku = 'sp';
  const where = () => (places.locations.length > 1 && chance.chance(0.5) ? chance.pick(places.locations) : 'default');
  const batches = [
    { ref: 'pa', sku, qty: chance.int(2, 5), eta: null, location: where() },
    { ref: 'pb', sku, qty: chance.int(1, 4), eta: null, location: where() },
    { ref: 'pc', sku, qty: chance.int(3, 8), eta: chance.pick(SHIPMENT_ETAS), location: where() },
  ];
  const qty = chance.int(1, 7);
  const lines = [{ sku, qty, ...(chance.chance(0.4) ? { split: chance.pick(['batches', 'locations']) } : {}) }];
  const cart = { lines, ...(chance.chance(0.3) ? { destination: { country: chance.pick(COUNTRIES) } } : {}) };
  const steps = inTurn(chance, at, [
    ...batches.map((batch) => addBatch(chance, batch)),
    { kind: 'http', routeKey: 'POST /holds', body: { holdid: chance.pick(HOLDS), lines: [{ sku, qty: chance.int(1, 3) }], ttl_seconds: 1 } },
    ...(chance.chance(0.4) ? [{ kind: 'http', routeKey: 'POST /holds', body: { holdid: chance.pick(HOLDS), lines: [{ sku, qty: 1 }], ttl_seconds: 900 } } as Draft] : []),
    { kind: 'clock', advanceMs: 5_000 },
    { kind: 'http', routeKey: 'POST /promises', body: cart },
    placedAsPromised(chance, cart),
  ]);
  const ordered = steps.at(-1) as Step;
  return chance.chance(0.3) ? [...steps, { at: ordered.at, draft: lineAt(chance.pick(ORDERS), sku, 1, 'default') }] : steps;
};

/**
 * Episodes with batches and SKUs of their own, drawn apart from the others (in four runs in ten),
 * so that they add to what a run meets without making the others rarer.
 */
export const OWN_BATCH_EPISODES: readonly (readonly [Episode, number])[] = [
  [wideConfirm, 1],
  [crowdOfHolds, 1],
  [saleChanged, 1],
  [saleHeldOut, 1],
  [spreadUnderAChange, 2],
  [promisedCart, 2],
];
