import { DEFAULT_HOLD_SECONDS } from '../../domain/holds';
import { ROUTING_LOCATIONS_MAX_AGE_MS } from '../../domain/ports';
import { skuPartition } from '../../functions/store/batches';
import { LOCATIONS_PARTITION } from '../../functions/store/locations';
import { piecePartitions } from '../../functions/store/pieces';
import type { Failure } from './judge';
import { type Answer, type Reached, bodyOf } from './observed';

/*
 * Promises (docs/api.md, "Promises") held to the order. A promise commits nothing. An order (or a
 * hold) sent once a promise was answered, with the same lines, routing and split, takes the batches
 * and parts the promise named, or refuses the lines it refused for the same reasons, and is refused
 * only where the promise refused (but for a hold too large for its confirm's transaction), wherever nothing came between the promise's send and the order's
 * answer that its plan reads: no write of another request to its SKUs' stock, their pieces or the
 * locations, no change of a location in the moment before (which a process's list of them may not
 * know yet), and no hold's expiry.
 */

type HttpAnswer = Answer & { readonly send: Extract<Answer['send'], { kind: 'http' }> };

interface PromisedLine {
  readonly sku: string;
  readonly parts: readonly { readonly batchref: string; readonly qty: number }[];
}

interface AnsweredLine {
  readonly sku: string;
  readonly qty: number;
  readonly batchref?: string;
  readonly parts?: readonly { readonly batchref: string; readonly qty: number }[];
}

const skusOf = (body: unknown): string[] => (((body ?? {}) as { lines?: { sku: string }[] }).lines ?? []).map(({ sku }) => sku);

/** The partitions an order's plan reads: its SKUs' stock and pieces, and the locations. */
const partitionsOf = (answer: HttpAnswer): Set<string> => {
  return new Set([LOCATIONS_PARTITION, ...skusOf(answer.send.body).flatMap((sku) => [skuPartition(sku), ...piecePartitions(sku)])]);
};

/** The body a promise and its order (or hold) share: the order's without its orderid, the hold's without its holdid and ttl. */
const cartOf = (answer: HttpAnswer): string => {
  const { orderid: _orderid, holdid: _holdid, ttl_seconds: _ttl, ...cart } = (answer.send.body ?? {}) as Record<string, unknown>;
  return JSON.stringify(cart);
};

/** What takes stock as a promise plans it: a new order, or a new hold. */
const PLACERS = new Set(['POST /orders', 'POST /holds']);

/** Each unit's place in a plan: `sku:batchref:qty`, sorted. */
const promisedUnits = (body: Record<string, unknown>): string[] =>
  ((body.parcels ?? []) as { lines: PromisedLine[] }[])
    .flatMap(({ lines }) => lines.flatMap(({ sku, parts }) => parts.map(({ batchref, qty }) => `${sku}:${batchref}:${qty}`)))
    .sort();

const orderedUnits = (body: Record<string, unknown>): string[] =>
  ((body.lines ?? []) as AnsweredLine[])
    .flatMap(({ sku, qty, batchref, parts }) => (parts ? parts.map((part) => `${sku}:${part.batchref}:${part.qty}`) : [`${sku}:${batchref}:${qty}`]))
    .sort();

const refusals = (lines: unknown): string =>
  JSON.stringify(((lines ?? []) as { sku: string; reason: string }[]).map(({ sku, reason }) => `${sku}:${reason}`).sort());

export const judgePromises = (answers: readonly Answer[], reached: readonly Reached[]): Failure[] => {
  const http = answers.filter((answer): answer is HttpAnswer => answer.send.kind === 'http');
  const commits = reached.filter(({ committed }) => committed);
  const failures: Failure[] = [];
  const promisers = new Set(http.filter(({ send }) => send.routeKey === 'POST /promises').map(({ actor }) => actor));
  for (const { actor, items } of commits.filter(({ actor }) => promisers.has(actor))) {
    failures.push({ rule: 'promise-writes-nothing', message: `${actor} (POST /promises) committed a write of ${items.join(', ')}` });
  }
  // When each hold placed or extended may expire: from its send's moment and its ttl to its answer's.
  // An extension names no SKU: it may be of any hold.
  const holdBounds = http.flatMap(({ send, sentTime, answeredTime }): { readonly skus?: ReadonlySet<string>; readonly from: number; readonly to: number }[] => {
    const ttl = Number((send.body as { ttl_seconds?: number } | undefined)?.ttl_seconds ?? DEFAULT_HOLD_SECONDS) * 1000;
    const window = { from: sentTime + ttl, to: (answeredTime ?? Number.MAX_SAFE_INTEGER - ttl) + ttl };
    if (send.routeKey === 'PATCH /holds/{holdid}') return [window];
    return send.routeKey === 'POST /holds' ? [{ ...window, skus: new Set(skusOf(send.body)) }] : [];
  });
  for (const promise of http.filter(({ send, status }) => send.routeKey === 'POST /promises' && status === 200)) {
    const cart = cartOf(promise);
    const orders = http.filter(
      (order) =>
        PLACERS.has(order.send.routeKey) &&
        order.answeredAt !== undefined &&
        order.sentAt >= (promise.answeredAt ?? Number.MAX_SAFE_INTEGER) &&
        cartOf(order) === cart,
    );
    for (const order of orders) {
      const planned = partitionsOf(order);
      const writtenBetween = commits.some(({ actor, step, items }) => actor !== order.actor && step > promise.sentAt && step < (order.answeredAt ?? 0) && items.some((item) => planned.has(item.split(' ')[0] ?? '')));
      const [from, to] = [promise.sentTime, order.answeredTime ?? Number.MAX_SAFE_INTEGER];
      const skus = skusOf(order.send.body);
      const holdEndsBetween = holdBounds.some((hold) => hold.from <= to && hold.to >= from && (!hold.skus || skus.some((sku) => hold.skus?.has(sku))));
      // A process routes by the locations as it last read them, a moment old: a change of one that
      // recent may reach the order's process and not the promise's.
      const placesChanged = http.some(
        ({ send, sentTime, answeredTime }) => send.routeKey === 'PUT /locations/{id}' && (answeredTime ?? Number.MAX_SAFE_INTEGER) >= from - ROUTING_LOCATIONS_MAX_AGE_MS && sentTime <= to,
      );
      if (writtenBetween || holdEndsBetween || placesChanged || order.died || (order.status ?? 500) >= 500) continue;
      const [promised, ordered] = [bodyOf(promise), bodyOf(order)];
      const refused = (promised.refused ?? []) as unknown[];
      const answered = `${order.actor} (${order.send.routeKey}) answered ${order.status} ${order.body} after ${promise.actor} promised ${promise.body}, with nothing written between`;
      if (refused.length > 0) {
        if (order.status !== 400 || refusals(ordered.lines) !== refusals(refused)) failures.push({ rule: 'promise-is-order', message: answered });
        continue;
      }
      // A hold must fit its confirm's transaction as well as its own, which the promise, an order's plan, does not weigh.
      const holdTooLarge = order.send.routeKey === 'POST /holds' && bodyOf(order).code === 'too_many_parts';
      if (order.status === 400 && !holdTooLarge) failures.push({ rule: 'promise-is-order', message: answered });
      // A repeat (200), or an id that had lines or a hold of its own already (409), is no new plan.
      if (order.status !== 201) continue;
      if (JSON.stringify(orderedUnits(ordered)) !== JSON.stringify(promisedUnits(promised))) {
        failures.push({
          rule: 'promise-is-order',
          message: `${order.actor} took ${orderedUnits(ordered).join(', ')} after ${promise.actor} promised ${promisedUnits(promised).join(', ')}, with nothing written between`,
        });
      }
    }
  }
  return failures;
};
