import type { Chance } from './chance';
import { STOCK_EPISODES, drawAdjustment, drawImport, historyRead } from './stock-workload';
import type { Draft, Places, Send, Step, Workload } from './workload-steps';
import { EPISODES, OWN_BATCH_EPISODES } from './episodes';
import { SKUS, ORDERS, HOLDS, TRANSFERS, SHIPMENTS, SHIPMENT_ETAS, BURST_ORDERS, ADVANCES_MS, routingOf, linesOf, shipmentOf, splitLinesOf, placedAsPromised, cartOf, locationBody, drawBatch, hotBatch, addBatch, transfer } from './workload-draws';

/*
 * What the clients of a run send, drawn from its seed: a few dozen requests over two SKUs, a few
 * batches and up to three locations (and the SKUs and batches of its episodes), sized so that they meet at a batch's last units; and, where
 * an episode needs one, a spread, or a stocktake that a count reported later names (./stock-workload.ts). A send goes at a step of the run (the number of store calls made
 * before it); identical requests are a client's retry, sent while the first may still be in flight.
 */

export type { Send, Workload } from './workload-steps';

/**
 * What a run's middle dwells on: its requests of that family weigh four times as much, so that the
 * races within one family (two cancels of a transfer, a confirm and a release of one hold) meet
 * often, while every run still draws from every family.
 */
export type Focus = 'everything' | 'lines' | 'holds' | 'transfers' | 'stock';
type Family = Exclude<Focus, 'everything'> | 'other';
const FOCUS_WEIGHT = 4;

/** One request of the run's middle, where everything meets. */
const drawRequest = (chance: Chance, places: Places, focus: Focus): Draft => {
  const orderid = () => chance.pick(ORDERS);
  const holdid = () => chance.pick(HOLDS);
  const transferid = () => chance.pick(TRANSFERS);
  // A transfer's incoming batch is a batch too (its ref is the transferid), to change and read.
  const ref = () => (places.locations.length > 1 && chance.chance(0.2) ? chance.pick(TRANSFERS) : chance.pick(places.batches).ref);
  const lineSku = () => (places.hotSku && chance.chance(0.7) ? places.hotSku : chance.pick(SKUS));
  const draws: (readonly [() => Draft, number, Family])[] = [
    [() => ({ kind: 'http', routeKey: 'POST /allocate', body: { orderid: orderid(), sku: lineSku(), qty: chance.int(1, 3), ...routingOf(chance, places) } }), 24, 'lines'],
    // A line no one batch may hold, which the request allows to split (docs/api.md, "Split lines").
    [
      () => ({
        kind: 'http',
        routeKey: 'POST /allocate',
        body: { orderid: orderid(), sku: lineSku(), qty: chance.int(3, 9), split: chance.pick(['batches', 'locations']), ...routingOf(chance, places) },
      }),
      8,
      'lines',
    ],
    [() => ({ kind: 'http', routeKey: 'POST /orders', body: { orderid: orderid(), lines: linesOf(chance), ...routingOf(chance, places) } }), 7, 'lines'],
    // An order whose lines may be split, by its own `split` or a line's.
    [
      () => ({
        kind: 'http',
        routeKey: 'POST /orders',
        body: { orderid: orderid(), split: chance.pick(['batches', 'locations']), lines: splitLinesOf(chance), ...routingOf(chance, places) },
      }),
      4,
      'lines',
    ],
    // A cart promised, often followed by its order (followUp): the judge holds the two to the same plan.
    [() => ({ kind: 'http', routeKey: 'POST /promises', body: cartOf(chance, places) }), 5, 'lines'],
    [() => ({ kind: 'http', routeKey: 'POST /holds', body: { holdid: holdid(), lines: linesOf(chance), ttl_seconds: chance.pick([1, 30, 300, 900]), ...routingOf(chance, places) } }), 10, 'holds'],
    // A hold whose lines may be split, and are confirmed onto the same parts.
    [
      () => ({
        kind: 'http',
        routeKey: 'POST /holds',
        body: { holdid: holdid(), split: chance.pick(['batches', 'locations']), lines: splitLinesOf(chance), ttl_seconds: chance.pick([1, 30, 300]), ...routingOf(chance, places) },
      }),
      4,
      'holds',
    ],
    [() => ({ kind: 'http', routeKey: 'PATCH /holds/{holdid}', path: { holdid: holdid() }, body: { ttl_seconds: chance.pick([30, 300]) } }), 3, 'holds'],
    [() => ({ kind: 'http', routeKey: 'POST /holds/{holdid}/confirm', path: { holdid: holdid() }, body: { orderid: orderid() } }), 7, 'holds'],
    [() => ({ kind: 'http', routeKey: 'DELETE /holds/{holdid}', path: { holdid: holdid() } }), 5, 'holds'],
    [() => ({ kind: 'http', routeKey: 'DELETE /allocations/{orderid}/{sku}', path: { orderid: orderid(), sku: chance.pick(SKUS) } }), 6, 'lines'],
    [
      () => ({
        kind: 'http',
        routeKey: 'PATCH /batches/{ref}',
        path: { ref: ref() },
        // Counts corrected down more often than up, to nothing among them: a batch left owing its lines.
        body: chance.weighted<object>([
          [{ qty: 0 }, 1],
          [{ qty: chance.int(1, 3) }, 2],
          [{ qty: chance.int(4, 10) }, 2],
          [{ eta: null }, 2],
          [{ eta: chance.pick(SHIPMENT_ETAS) }, 1],
        ]),
      }),
      9,
      'lines',
    ],
    [() => drawAdjustment(chance, places), 8, 'stock'],
    [() => historyRead(chance, places), 2, 'stock'],
    [() => drawImport(chance, places), 2, 'stock'],
    [() => ({ kind: 'http', routeKey: 'GET /batches/{ref}', path: { ref: ref() } }), 3, 'other'],
    [() => ({ kind: 'http', routeKey: 'GET /skus/{sku}/stock', path: { sku: chance.pick(SKUS) } }), 1, 'other'],
    [() => ({ kind: 'http', routeKey: 'GET /holds/{holdid}', path: { holdid: holdid() } }), 2, 'holds'],
    [() => ({ kind: 'http', routeKey: 'GET /allocations/{orderid}', path: { orderid: orderid() } }), 2, 'lines'],
    [() => shipmentOf(chance, places, orderid()), 5, 'lines'],
    [() => ({ kind: 'http', routeKey: 'GET /shipments/{shipmentid}', path: { shipmentid: chance.pick(SHIPMENTS) } }), 1, 'other'],
    [() => transfer(chance, places, transferid()), places.locations.length > 1 ? 7 : 0, 'transfers'],
    [() => ({ kind: 'http', routeKey: 'DELETE /transfers/{transferid}', path: { transferid: transferid() } }), places.locations.length > 1 ? 6 : 0, 'transfers'],
    [
      () => {
        const id = chance.pick(places.locations);
        return { kind: 'http', routeKey: 'PUT /locations/{id}', path: { id }, body: locationBody(chance, id) };
      },
      2,
      'other',
    ],
    [() => addBatch(chance, drawBatch(chance, `b${chance.int(1, 6)}`, places.locations)), 3, 'other'],
    [() => ({ kind: 'sweep' }), 3, 'holds'],
    [() => ({ kind: 'clock', advanceMs: chance.pick(ADVANCES_MS) }), 4, 'holds'],
  ];
  return chance.weighted(draws.map(([draw, weight, family]) => [draw, family === focus ? weight * FOCUS_WEIGHT : weight] as const))();
};

const isRead = (draft: Draft) => draft.kind === 'http' && draft.routeKey.startsWith('GET ');

/**
 * What a client does next with what it just made or ended: cancels or receives the transfer, ends
 * or reads the hold, ships or cancels the line, reads what it changed.
 */
const followUp = (chance: Chance, places: Places, draft: Draft): Draft | undefined => {
  if (draft.kind !== 'http') return undefined;
  const body = (draft.body ?? {}) as Record<string, unknown>;
  switch (draft.routeKey) {
    case 'POST /transfers': {
      // Its incoming batch (ref: the transferid) received, or made a shipment again, or the transfer cancelled.
      const ref = String(body.transferid);
      return chance.weighted<Draft>([
        [{ kind: 'http', routeKey: 'DELETE /transfers/{transferid}', path: { transferid: ref } }, 3],
        [{ kind: 'http', routeKey: 'PATCH /batches/{ref}', path: { ref }, body: { eta: null } }, 2],
        [{ kind: 'http', routeKey: 'PATCH /batches/{ref}', path: { ref }, body: { eta: chance.pick(SHIPMENT_ETAS) } }, 1],
      ]);
    }
    case 'POST /holds': {
      const path = { holdid: String(body.holdid) };
      return chance.weighted<Draft>([
        [{ kind: 'http', routeKey: 'POST /holds/{holdid}/confirm', path, body: { orderid: chance.pick(ORDERS) } }, 3],
        [{ kind: 'http', routeKey: 'DELETE /holds/{holdid}', path }, 2],
        [{ kind: 'http', routeKey: 'PATCH /holds/{holdid}', path, body: { ttl_seconds: chance.pick([30, 300]) } }, 1],
        [{ kind: 'http', routeKey: 'GET /holds/{holdid}', path }, 1],
      ]);
    }
    case 'POST /allocate': {
      const { orderid, sku } = { orderid: String(body.orderid), sku: String(body.sku) };
      return chance.weighted<Draft>([
        [{ kind: 'http', routeKey: 'DELETE /allocations/{orderid}/{sku}', path: { orderid, sku } }, 3],
        [shipmentOf(chance, places, orderid, [sku]), 2],
      ]);
    }
    case 'POST /orders':
      return chance.chance(0.5) ? shipmentOf(chance, places, String(body.orderid)) : undefined;
    case 'POST /promises':
      return placedAsPromised(chance, body);
    case 'POST /shipments':
      return chance.weighted<Draft>([
        [{ kind: 'http', routeKey: 'GET /shipments/{shipmentid}', path: { shipmentid: String(body.shipmentid) } }, 1],
        [{ kind: 'http', routeKey: 'GET /allocations/{orderid}', path: { orderid: String(body.orderid) } }, 1],
      ]);
    case 'DELETE /holds/{holdid}':
    case 'POST /holds/{holdid}/confirm':
      return { kind: 'http', routeKey: 'GET /holds/{holdid}', path: { holdid: String(draft.path?.holdid) } };
    case 'DELETE /allocations/{orderid}/{sku}':
      return { kind: 'http', routeKey: 'GET /allocations/{orderid}', path: { orderid: String(draft.path?.orderid) } };
    case 'PATCH /batches/{ref}':
      return { kind: 'http', routeKey: 'GET /batches/{ref}', path: { ref: String(draft.path?.ref) } };
    case 'POST /adjustments':
      return { kind: 'http', routeKey: 'GET /batches/{ref}', path: { ref: String(body.ref) } };
    default:
      return undefined;
  }
};

/**
 * A run's workload: the locations and batches first (sent at the first steps, so that they too
 * may race what follows), then the rest at steps drawn over about three a request, so that many
 * are in flight at once, half of them followed by what a client does next with what it made; some
 * sent twice, as a client that timed out sends again; up to two episodes among them, and in four
 * runs in ten one with batches of its own; up to two of counts reported late (./stock-workload.ts). The run dwells on one family of requests, or on none
 * (Focus).
 */
export const drawWorkload = (chance: Chance): Workload => {
  const focus = chance.weighted<Focus>([['everything', 2], ['lines', 1], ['holds', 1], ['transfers', 1], ['stock', 1]]);
  const others = ['north', 'south'].filter(() => chance.chance(0.6));
  // A transfer goes from one location to another: a run about transfers has two at least.
  const locations = ['default', ...(others.length === 0 && focus === 'transfers' ? ['north'] : others)];
  const batchCount = chance.int(2, 4);
  const hot = chance.chance(0.4);
  const batches = Array.from({ length: batchCount }, (_, index) => (hot && index === 0 ? hotBatch(chance, 'b1') : drawBatch(chance, `b${index + 1}`, locations)));
  const places: Places = { locations, batches, ...(hot ? { hotSku: batches[0]?.sku } : {}) };
  const drafts: Step[] = [];
  for (const id of locations.slice(1)) drafts.push({ at: 0, draft: { kind: 'http', routeKey: 'PUT /locations/{id}', path: { id }, body: locationBody(chance, id) } });
  for (const batch of batches) drafts.push({ at: chance.int(0, 2), draft: addBatch(chance, batch) });
  // Enough lines at once on a hot SKU's batch that a process serving them all groups its takes
  // (more than the takes it keeps in flight on one batch).
  if (places.hotSku && chance.chance(0.5)) {
    const at = chance.int(4, 20);
    for (const orderid of BURST_ORDERS) drafts.push({ at, draft: { kind: 'http', routeKey: 'POST /allocate', body: { orderid, sku: places.hotSku, qty: chance.int(1, 2) } } });
  }
  const middle = chance.int(16, 32);
  const span = middle * 3;
  for (let count = chance.weighted([[0, 1], [1, 2], [2, 2]]); count > 0; count--) {
    drafts.push(...chance.weighted(EPISODES)(chance, places, chance.int(1, span)));
  }
  if (chance.chance(0.4)) drafts.push(...chance.weighted(OWN_BATCH_EPISODES)(chance, places, chance.int(1, span)));
  for (let count = chance.weighted(focus === 'stock' ? [[1, 1], [2, 2]] : [[0, 2], [1, 2], [2, 1]]); count > 0; count--) {
    drafts.push(...chance.weighted(STOCK_EPISODES)(chance, places, chance.int(1, span)));
  }
  for (let index = 0; index < middle; index++) {
    const at = chance.int(1, span);
    const draft = drawRequest(chance, places, focus);
    const next = chance.chance(0.5) ? followUp(chance, places, draft) : undefined;
    const nextAt = at + chance.int(1, 12);
    const first: Step = { at, draft };
    drafts.push(first);
    if (draft.kind === 'http' && chance.chance(0.2)) drafts.push({ at: at + chance.int(0, 2), draft });
    if (!next) continue;
    // A read of what the request made or ended is sent once it has its answer, so that it reads what
    // the answer told; an ending (a cancel, a release, a confirm) is sent twice more often: a client
    // unsure it landed sends it again, and two of one ending race for the same record.
    // So is a promised cart's order: the promise's answer is what it holds the order to.
    if (isRead(next) || (draft.kind === 'http' && draft.routeKey === 'POST /promises')) drafts.push({ at: nextAt, draft: next, after: first });
    else {
      drafts.push({ at: nextAt, draft: next });
      if (next.kind === 'http' && chance.chance(0.4)) drafts.push({ at: nextAt + chance.int(0, 2), draft: next });
    }
  }
  const sorted = drafts.map((step, order) => ({ step, order })).sort((one, other) => one.step.at - other.step.at || one.order - other.order);
  const ids = new Map(sorted.map(({ step }, index) => [step, index + 1]));
  return sorted.map(
    ({ step: { at, draft, after, countedAtOf, countedAtOffset, cursorOf } }, index) =>
      ({
        ...draft,
        id: index + 1,
        at,
        ...(after ? { after: ids.get(after) } : {}),
        ...(countedAtOf ? { countedAtOf: ids.get(countedAtOf) } : {}),
        ...(countedAtOffset === undefined ? {} : { countedAtOffset }),
        ...(cursorOf ? { cursorOf: ids.get(cursorOf) } : {}),
      }) as Send,
  );
};

/** How the story names a send. */
export const describeSend = (send: Send): string => {
  switch (send.kind) {
    case 'sweep':
      return 'sweep holds';
    case 'clock':
      return `clock +${send.advanceMs / 1000}s`;
    case 'spread':
      return `spread batch ${send.ref} of ${send.sku}`;
    case 'stocktake':
      return `stocktake: batch ${send.ref} counted`;
    case 'import-file':
      return `import ${send.importid}'s file of ${send.rows.length} rows uploaded and run ${JSON.stringify(send.rows)}`;
    case 'http': {
      const path = send.routeKey.replace(/\{([^}]+)\}/g, (_, name: string) => send.path?.[name] ?? '');
      const query = send.query ? `?${new URLSearchParams(send.query).toString()}` : '';
      const page = send.cursorOf === undefined ? '' : ` (the page after r${send.cursorOf}'s)`;
      return `${path}${query}${page}${send.body === undefined ? '' : ` ${JSON.stringify(send.body)}`}`;
    }
  }
};
