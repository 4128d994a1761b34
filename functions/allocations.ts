import { type LocatedHold, confirmHold, extendHold, holdStatus, placeHold, releaseHold } from '../domain/hold-services';
import { DEFAULT_HOLD_SECONDS, linesOfHold } from '../domain/holds';
import { type LinePart, type RoutedAllocation, orderedQtyOf } from '../domain/model';
import { placedParts, shippedQtyOf } from '../domain/shipments';
import type { BatchRepository } from '../domain/ports';
import type { Destination, Routing } from '../domain/routing';
import { allocate, cancelAllocation, orderAllocations } from '../domain/services';
import { allocateOrder } from '../domain/order-services';
import { promiseCart } from '../domain/promise-services';
import type { CartPromise, Parcel } from '../domain/promises';
import { countingHoldEndings } from './hold-endings';
import { type OpenApiDocumentReader, openApiDocumentFile, openApiDocumentResult } from './http/openapi-document';
import { json, noContent, route, routedHandler } from './http/route';
import type { AllocationsRouteKey } from './http/route-keys';
import { cartSchema, holdConfirmationSchema, holdExtensionSchema, holdSchema, orderLineSchema, orderSchema } from './http/order-schemas';
import { batchRepository } from './store/repository';
import { metricNames } from './telemetry-names';

/**
 * Where a line's units are, as every answer shows them: its batch and that batch's location, and, for
 * a line its request allowed to split, its parts (docs/api.md, "Split lines"), whose batch and
 * location the line names only when it is in one part.
 */
const placeView = ({ batchref, location, parts }: { readonly batchref: string; readonly location: string; readonly parts?: readonly (LinePart & { readonly shipped?: number })[] }) => {
  if (!parts) return { batchref, location };
  const view = parts.map((part) => ({ batchref: part.batchref, location: part.location, qty: part.qty, ...shippedView(part.shipped ?? 0) }));
  return parts.length === 1 ? { batchref, location, parts: view } : { parts: view };
};

/** The units shipped, where some were (docs/api.md, "Shipments"): absent on a line or a part that shipped none. */
const shippedView = (shipped: number) => (shipped > 0 ? { shipped } : {});

/**
 * An order's or a hold's line as every answer shows it, with its batch's location; every field
 * named, so that what the store holds beside them (its routing) never reaches a client. `qty` is
 * what the line was allocated, and a split line's parts each batch's share of it, shipped units
 * counted in: `shipped` says how many of them left.
 */
const routedLineView = (line: Pick<RoutedAllocation, 'sku' | 'qty' | 'batchref' | 'location' | 'split' | 'shipped'>) => ({
  sku: line.sku,
  qty: orderedQtyOf(line),
  ...placeView({ batchref: line.batchref, location: line.location, ...(line.split ? { parts: placedParts(line) } : {}) }),
  ...shippedView(shippedQtyOf(line)),
});

/** What a request says of where its lines may come from, the fields it left out absent. */
const routingOf = (destination: Destination | undefined, location: string | undefined): Routing => ({
  ...(destination ? { destination } : {}),
  ...(location ? { location } : {}),
});

/** A hold as read at some moment (its status then), each line with its batch's location, a split line with its parts; `orderid` once confirmed. */
const holdView = (hold: LocatedHold) => ({
  holdid: hold.holdid,
  status: hold.status,
  expires_at: hold.expiresAt,
  lines: linesOfHold(hold).map(routedLineView),
  ...(hold.orderid === undefined ? {} : { orderid: hold.orderid }),
});

/** What leaves one location, as a promise shows it: each line's units there, and each part's batch and eta. */
const parcelView = ({ location, shipsOn, arrivesBy, lines }: Parcel) => ({
  location,
  ships_on: shipsOn,
  ...(arrivesBy === undefined ? {} : { arrives_by: arrivesBy }),
  lines: lines.map(({ sku, qty, parts }) => ({ sku, qty, parts: parts.map(({ batchref, qty, eta }) => ({ batchref, qty, eta })) })),
});

/** A cart's promise: its parcels and days, or the lines refused, each with the most a line of its SKU could be promised. */
const promiseView = ({ parcels, shipsOn, arrivesBy, refused }: CartPromise) => ({
  ...(shipsOn === undefined ? {} : { ships_on: shipsOn }),
  ...(arrivesBy === undefined ? {} : { arrives_by: arrivesBy }),
  parcels: parcels.map(parcelView),
  refused: refused.map(({ sku, reason, promisableQty }) => ({ sku, reason, promisable_qty: promisableQty })),
});

/**
 * The copy of docs/openapi.json that the stack ships beside the bundle (infra/constructs/http-api.ts).
 * Run from source, this module has none beside it: the local server and the tests that ask for the
 * document pass a reader of docs/openapi.json.
 */
const documentBesideTheBundle = openApiDocumentFile(new URL('./openapi.json', import.meta.url));

/**
 * Order lines: allocating one, or a whole order's, promising a cart, reading an order's, and cancelling one; holds
 * through checkout, which end as an order's lines; and the API's OpenAPI document.
 */
export const createAllocationsHandler = (repository: BatchRepository, readOpenApiDocument: OpenApiDocumentReader = documentBesideTheBundle) =>
  routedHandler<AllocationsRouteKey>(repository, [
    route('POST /allocate', {
      body: orderLineSchema,
      successOutcomes: { 200: 'AlreadyAllocated', 201: 'Allocated' },
      // 201 with the batch and its location (and a split line's parts) for a new line, 200 for an exact repeat of an allocated line.
      run: async ({ body: { destination, location, split, ...line } }, store, counter) => {
        const { created, ...placed } = await allocate(line, store, routingOf(destination, location), split);
        if (created) counter.count(metricNames.linesAllocated);
        return json(created ? 201 : 200, placeView(placed));
      },
    }),
    route('POST /orders', {
      body: orderSchema,
      successOutcomes: { 200: 'OrderAlreadyAllocated', 201: 'OrderAllocated' },
      // 201 when it allocated at least one new line, 200 when every line was already allocated.
      run: async ({ body: { destination, location, ...order } }, store, counter) => {
        const { lines, newLines } = await allocateOrder(order, store, routingOf(destination, location));
        if (newLines > 0) {
          counter.count(metricNames.ordersAllocated);
          counter.count(metricNames.linesAllocated, newLines);
        }
        return json(newLines > 0 ? 201 : 200, { orderid: order.orderid, lines: lines.map(routedLineView) });
      },
    }),
    route('POST /promises', {
      body: cartSchema,
      successOutcomes: { 200: 'CartPromised' },
      // 200 whether or not every line can be promised: a promise is an answer about stock, never a refusal of the request.
      run: async ({ body: { destination, location, ...cart } }, store) => json(200, promiseView(await promiseCart(cart, store, routingOf(destination, location)))),
    }),
    route('GET /allocations/{orderid}', {
      successOutcomes: { 200: 'OrderRead' },
      run: async ({ pathParameters: { orderid } }, store) => {
        const lines = await orderAllocations(orderid, store);
        return json(200, { orderid, lines: lines.map(routedLineView) });
      },
    }),
    route('DELETE /allocations/{orderid}/{sku}', {
      successOutcomes: { 204: 'LineCancelled' },
      run: async ({ pathParameters: { orderid, sku } }, store) => {
        await cancelAllocation(orderid, sku, store);
        return noContent();
      },
    }),
    route('POST /holds', {
      body: holdSchema,
      successOutcomes: { 200: 'HoldAlreadyPlaced', 201: 'HoldPlaced' },
      // A repeat may find the hold expired and end it (so do an extension and a confirm): counted as it is written.
      run: async ({ body: { ttl_seconds: ttlSeconds = DEFAULT_HOLD_SECONDS, destination, location, ...body } }, store, counter) => {
        const { hold, created } = await placeHold({ ...body, ttlSeconds }, countingHoldEndings(store, counter), routingOf(destination, location));
        if (created) counter.count(metricNames.holdsPlaced);
        return json(created ? 201 : 200, holdView(hold));
      },
    }),
    route('GET /holds/{holdid}', {
      successOutcomes: { 200: 'HoldRead' },
      run: async ({ pathParameters: { holdid } }, store) => json(200, holdView(await holdStatus(holdid, store))),
    }),
    route('PATCH /holds/{holdid}', {
      body: holdExtensionSchema,
      successOutcomes: { 200: 'HoldExtended' },
      run: async ({ pathParameters: { holdid }, body: { ttl_seconds: ttlSeconds } }, store, counter) =>
        json(200, holdView(await extendHold(holdid, ttlSeconds, countingHoldEndings(store, counter)))),
    }),
    route('DELETE /holds/{holdid}', {
      successOutcomes: { 204: 'HoldReleased' },
      run: async ({ pathParameters: { holdid } }, store, counter) => {
        await releaseHold(holdid, countingHoldEndings(store, counter));
        return noContent();
      },
    }),
    route('POST /holds/{holdid}/confirm', {
      body: holdConfirmationSchema,
      successOutcomes: { 200: 'HoldAlreadyConfirmed', 201: 'HoldConfirmed' },
      run: async ({ pathParameters: { holdid }, body: { orderid } }, store, counter) => {
        const { lines, created } = await confirmHold(holdid, orderid, countingHoldEndings(store, counter));
        if (created) {
          counter.count(metricNames.holdsConfirmed);
          counter.count(metricNames.linesAllocated, lines.length);
        }
        return json(created ? 201 : 200, { orderid, lines: lines.map(routedLineView) });
      },
    }),
    route('GET /openapi.json', {
      successOutcomes: { 200: 'OpenApiDocumentRead' },
      run: async () => openApiDocumentResult(await readOpenApiDocument()),
    }),
  ]);

export const handler = createAllocationsHandler(batchRepository);
