/** The allocations function's routes as docs/openapi.json describes them, each answer with when, in the words of docs/api.md. */
import {
  HoldConflict,
  HoldNotFound,
  HoldNotPlaced,
  InvalidSku,
  LineAlreadyAllocated,
  LineShipped,
  LineNotFound,
  LineRoutedOtherwise,
  LineSplitOtherwise,
  OrderLinesAlreadyAllocated,
  OrderLinesRoutedOtherwise,
  OrderLinesSplitOtherwise,
  TooManyParts,
  OrderNotAllocated,
  OrderNotFound,
  OutOfStock,
  StoreUnavailable,
  UnknownLocation,
} from '../../domain/errors';
import { MAX_TRANSACTION_ITEMS } from '../../functions/store/store-calls';
import { MAX_PARTS_PER_LINE } from '../../domain/split-lines';
import { OPENAPI_DOCUMENT_CACHE_CONTROL } from '../../functions/http/openapi-document';
import type { AllocationsRouteKey } from '../../functions/http/route-keys';
import { OPENAPI_VERSION } from './components';
import { type Operation, json, mapped, functionError } from './answers';

/** A line of 30 split over two batches at one place, as an order's or a hold's answer shows it. */
const SPLIT_LINE_EXAMPLE = {
  sku: 'LAMP',
  qty: 30,
  parts: [
    { batchref: 'batch-1', location: 'default', qty: 20 },
    { batchref: 'batch-2', location: 'default', qty: 10 },
  ],
};

const HOLD_EXAMPLE = {
  holdid: 'cart-7',
  status: 'active',
  expires_at: '2026-11-25T10:15:00.000Z',
  lines: [{ sku: 'LAMP', qty: 1, batchref: 'batch-1', location: 'default' }],
};

export const allocationOperations: Readonly<Record<AllocationsRouteKey, Operation>> = {
  'POST /allocate': {
    operationId: 'allocate',
    summary: 'Allocate an order line',
    description:
      'Allocates the line whole to one batch of its SKU, at an active location the request allows (all of them, unless it ' +
      'names a `destination` or a `location`): in stock before shipments, the earliest `eta` among shipments, then the ' +
      "location's priority, its distance to the destination, its id, and the batch's `ref`. With `split`, the line may " +
      'come from several batches (`batches`: at one location; `locations`: at several): every part in stock first, then ' +
      `the fewest locations, then the fewest parts (at most ${MAX_PARTS_PER_LINE}), then the rule above, batch by batch; ` +
      'all parts are taken in one transaction. A line is identified by (`orderid`, `sku`): the same line again is a retry, ' +
      'answered with the batch (or the parts) it has.',
    requestBody: {
      schema: 'OrderLine',
      example: { orderid: 'order-1', sku: 'LAMP', qty: 3, destination: { country: 'FR', position: { lat: 48.86, lng: 2.35 } } },
      refused: { orderid: 'order-1', sku: 'LAMP', qty: 0 },
    },
    answers: [
      { status: 201, when: 'The line was allocated', name: 'Allocated', body: json('BatchRef', { batchref: 'batch-1', location: 'default' }) },
      {
        status: 200,
        when: 'The same line (same `orderid`, `sku`, `qty`, `destination` and `location`) was already allocated: a retry, answered with the batch it has',
        name: 'AlreadyAllocated',
        body: json('BatchRef', { batchref: 'batch-1', location: 'default' }),
      },
      {
        status: 201,
        when: 'A line whose request allowed a `split` was allocated: its parts, each on its batch (a line in one part names its batch and location too)',
        name: 'SplitLineAllocated',
        body: json('BatchRef', {
          parts: [
            { batchref: 'batch-7', location: 'default', qty: 3 },
            { batchref: 'batch-8', location: 'default', qty: 2 },
          ],
        }),
      },
      mapped('No batch of that SKU was ever added', new InvalidSku('LAMP')),
      mapped(
        'No batch at an eligible location can take the whole line (`reason` `out_of_stock`), or no location is eligible ' +
          '(`no_location`: `No location serves the request for sku <sku>: <why>`, why the request\'s `location` or `destination` left none)',
        new OutOfStock('LAMP'),
        'LineRefused',
      ),
      mapped(
        'The `location` named is well formed but no location has that id. Answered as the other field errors are, one issue naming `location`',
        new UnknownLocation('warehouse-9'),
        'InvalidRequestBody',
      ),
      mapped('The same (`orderid`, `sku`) is allocated with another `qty`; nothing changes', new LineAlreadyAllocated('order-1', 'LAMP', 4)),
      mapped(
        'The same (`orderid`, `sku`) is allocated with the same `qty` for a request that named another `destination` or `location` ' +
          '(one named where the other named none among them); nothing changes',
        new LineRoutedOtherwise('order-1', 'LAMP'),
      ),
      mapped(
        'The same (`orderid`, `sku`) is allocated with the same `qty` and routing for a request that allowed another `split` ' +
          '(absent counts as `none`); nothing changes',
        new LineSplitOtherwise('order-1', 'LAMP'),
      ),
    ],
  },
  'POST /orders': {
    operationId: 'allocateOrder',
    summary: 'Allocate a whole order',
    description:
      'Every line allocated, or none, all lines planned at once among the batches at the active locations the request ' +
      'allows (`destination`, `location`, as for one line): as few lines on shipments as can be, then as few locations ' +
      'as can be, then as few parts as can be (a line whose `split` allows it may come from several batches), then each ' +
      'line by the rule of `POST /allocate`; all the new lines are written in one transaction, which holds at most ' +
      `${MAX_TRANSACTION_ITEMS} writes: each line's record and each part's, and each take from a batch (a whole line's one, a split line's one a part), ` +
      'two when it empties its batch. ' +
      'Idempotent per line: a line already allocated with the same `qty`, routing and `split` counts as done and keeps its batch (or its parts).',
    requestBody: {
      schema: 'Order',
      example: {
        orderid: 'order-2',
        lines: [
          { sku: 'LAMP', qty: 1 },
          { sku: 'SOFA', qty: 2 },
        ],
      },
      refused: {
        orderid: 'order-2',
        lines: [
          { sku: 'LAMP', qty: 1 },
          { sku: 'SOFA', qty: 2 },
          { sku: 'CHAIR', qty: 4 },
          { sku: 'LAMP', qty: 3 },
        ],
      },
    },
    answers: [
      {
        status: 201,
        when: 'At least one new line was allocated. The body holds every line of this request (not other lines the same `orderid` got elsewhere), sorted by `sku`',
        name: 'OrderAllocated',
        body: json('RoutedOrder', {
          orderid: 'order-2',
          lines: [
            { sku: 'LAMP', qty: 1, batchref: 'batch-1', location: 'default' },
            { sku: 'SOFA', qty: 2, batchref: 'batch-7', location: 'default' },
          ],
        }),
      },
      {
        status: 201,
        when: 'An order whose `split` allowed a line to come from several batches: that line names its parts',
        name: 'SplitOrderAllocated',
        body: json('RoutedOrder', {
          orderid: 'order-3',
          lines: [
            SPLIT_LINE_EXAMPLE,
            { sku: 'SOFA', qty: 2, batchref: 'batch-7', location: 'default', parts: [{ batchref: 'batch-7', location: 'default', qty: 2 }] },
          ],
        }),
      },
      {
        status: 200,
        when: 'Every line was already allocated with the same `qty`, `destination` and `location`: a repeat',
        name: 'OrderAlreadyAllocated',
        body: json('RoutedOrder', {
          orderid: 'order-2',
          lines: [
            { sku: 'LAMP', qty: 1, batchref: 'batch-1', location: 'default' },
            { sku: 'SOFA', qty: 2, batchref: 'batch-7', location: 'default' },
          ],
        }),
      },
      mapped(
        'Some new line cannot be allocated; nothing was allocated. `lines` names every line that fails, and why: ' +
          '`unknown_sku`, `out_of_stock` (no batch at an eligible location can take it), `no_location` (no location is eligible)',
        new OrderNotAllocated('order-2', [
          { sku: 'NOPE', reason: 'unknown_sku' },
          { sku: 'SOFA', reason: 'out_of_stock' },
        ]),
        'OrderNotAllocated',
      ),
      mapped(
        'The `location` named is well formed but no location has that id. Answered as the other field errors are, one issue naming `location`',
        new UnknownLocation('warehouse-9'),
        'InvalidRequestBody',
      ),
      mapped(
        'A line is already allocated with another `qty`; nothing changes. `lines` names each, with the qty it has',
        new OrderLinesAlreadyAllocated('order-2', [{ sku: 'LAMP', qty: 4 }]),
        'OrderLinesConflict',
      ),
      mapped(
        'Lines are already allocated with the same `qty` for a request that named another `destination` or `location`; ' +
          'nothing changes. `lines` names each',
        new OrderLinesRoutedOtherwise('order-2', [{ sku: 'LAMP' }]),
        'OrderLinesRoutedOtherwise',
      ),
      mapped(
        'Lines are already allocated for a request that allowed them another `split` (absent counts as `none`); nothing changes. `lines` names each',
        new OrderLinesSplitOtherwise('order-2', [{ sku: 'LAMP' }]),
        'OrderLinesSplitOtherwise',
      ),
      mapped(
        `The plan, its lines split as they allow, needs more than the ${MAX_TRANSACTION_ITEMS} writes of one transaction; nothing was ` +
          'allocated. Fewer lines allowed a `split`, or fewer lines, fit',
        new TooManyParts('order', 'order-2', 104, MAX_TRANSACTION_ITEMS),
      ),
    ],
  },
  'POST /promises': {
    operationId: 'promiseCart',
    summary: 'Promise a cart: where, and by when, it can ship',
    description:
      'The plan `POST /orders` would make for these lines at this moment, made by the same code on the same reads, with ' +
      'nothing written and no event sent: its parcels, a location each, with each line\'s parts and their batches\' `eta`, ' +
      'the day each ships and, where the location states its `transit_days`, the day it arrives at the `destination`\'s country. ' +
      'Units of expired holds count as free, as the order would give them back, but no hold is ended. An order sent right ' +
      'after with the same lines, routing and `split`, with no other write between, takes the same batches and parts. A line ' +
      'no plan can hold is named with its reason, as the order would refuse it, and the most units a line of its SKU could ' +
      'be promised; the order would then refuse the whole cart, so no parcel is promised.',
    requestBody: {
      schema: 'Cart',
      example: {
        lines: [
          { sku: 'LAMP', qty: 1 },
          { sku: 'SOFA', qty: 2 },
        ],
        destination: { country: 'FR' },
      },
      refused: { lines: [] },
    },
    answers: [
      {
        status: 200,
        when: 'Every line can be promised: the parcels, and when the cart ships (and arrives, when every parcel says)',
        name: 'CartPromised',
        body: json('CartPromise', {
          ships_on: '2026-11-26',
          arrives_by: '2026-11-27',
          parcels: [
            {
              location: 'default',
              ships_on: '2026-11-26',
              arrives_by: '2026-11-27',
              lines: [
                { sku: 'LAMP', qty: 1, parts: [{ batchref: 'batch-1', qty: 1, eta: null }] },
                { sku: 'SOFA', qty: 2, parts: [{ batchref: 'batch-7', qty: 2, eta: null }] },
              ],
            },
          ],
          refused: [],
        }),
      },
      {
        status: 200,
        when: 'A line cannot be promised: no parcel, and each line refused with the most a line of its SKU could be',
        name: 'CartLinesRefused',
        body: json('CartPromise', { parcels: [], refused: [{ sku: 'SOFA', reason: 'out_of_stock', promisable_qty: 2 }] }),
      },
      mapped(
        'The `location` named is well formed but no location has that id. Answered as the other field errors are, one issue naming `location`',
        new UnknownLocation('warehouse-9'),
        'InvalidRequestBody',
      ),
      mapped(
        `The plan, its lines split as they allow, needs more than the ${MAX_TRANSACTION_ITEMS} writes of the order's one transaction, as the order would be refused`,
        new TooManyParts('cart', '', 104, MAX_TRANSACTION_ITEMS),
      ),
    ],
  },
  'GET /allocations/{orderid}': {
    operationId: 'getOrderAllocations',
    summary: "Read an order's lines",
    description:
      'Once `POST /orders` has answered, every read sees all of its lines; one sent while the order is still committing ' +
      'may see only some of them.',
    pathParameters: { orderid: 'order-1' },
    answers: [
      {
        status: 200,
        when: 'The order has lines',
        name: 'OrderRead',
        body: json('OrderAllocations', { orderid: 'order-1', lines: [{ sku: 'LAMP', qty: 3, batchref: 'batch-1', location: 'default' }] }),
      },
      mapped(
        'The order has no line: never allocated, or every line cancelled or taken off it by a batch change',
        new OrderNotFound('order-1'),
      ),
    ],
  },
  'DELETE /allocations/{orderid}/{sku}': {
    operationId: 'cancelAllocation',
    summary: 'Cancel an order line',
    description:
      "Removes the line and gives its `qty` back to its batch, in one transaction. After a cancel the same (`orderid`, `sku`) " +
      'is a new line: `POST /allocate` answers 201 for any `qty`. A line that shipped some of its units gives back only the ' +
      'others and stays, as what it shipped.',
    pathParameters: { orderid: 'order-1', sku: 'LAMP' },
    answers: [
      { status: 204, when: 'The line was removed, or gave back the units it had not shipped (or a cancel did before: a repeat); no body, and no `Content-Type`', name: 'LineCancelled' },
      mapped('The line shipped every unit it was allocated: nothing is left to cancel', new LineShipped('order-1', 'LAMP', 3)),
      mapped(
        'The order has no line for this SKU: never allocated, already cancelled (a repeat), or taken off its order by a ' +
          'batch change; nothing changes',
        new LineNotFound('order-1', 'LAMP'),
      ),
    ],
  },
  'POST /holds': {
    operationId: 'placeHold',
    summary: 'Hold stock through checkout',
    description:
      'Sets aside every line, whole, in one batch (or, as far as its `split` allows, in parts over several), or none, in one ' +
      'transaction, the lines planned at once as an order\'s are, ' +
      'among the batches at the active locations the request allows (`destination`, `location`): what a checkout holds ' +
      'no one else can allocate or hold until the hold is confirmed, released, or expires. An expired hold never blocks a ' +
      'sale: its units are available again the moment `expires_at` passes. A `holdid` is used once.',
    requestBody: {
      schema: 'NewHold',
      example: { holdid: 'cart-7', lines: [{ sku: 'LAMP', qty: 1 }], ttl_seconds: 900 },
      refused: { holdid: 'cart-7', lines: [{ sku: 'LAMP', qty: 1 }], ttl_seconds: 86401 },
    },
    answers: [
      { status: 201, when: 'Every line is held, until `expires_at`', name: 'HoldPlaced', body: json('Hold', HOLD_EXAMPLE) },
      {
        status: 201,
        when: 'A hold whose `split` allowed a line to come from several batches: that line names its parts, which a confirm makes the order line\'s',
        name: 'SplitHoldPlaced',
        body: json('Hold', { ...HOLD_EXAMPLE, lines: [SPLIT_LINE_EXAMPLE] }),
      },
      {
        status: 200,
        when: 'The same `holdid` with the same lines, `destination`, `location` and `split`, while the hold is active: a repeat, which does not extend it',
        name: 'HoldAlreadyPlaced',
        body: json('Hold', HOLD_EXAMPLE),
      },
      mapped(
        'Some line cannot be held; nothing was held. `lines` names every line that fails, and why: `unknown_sku`, ' +
          '`out_of_stock` (no batch at an eligible location can take it), `no_location` (no location is eligible)',
        new HoldNotPlaced('cart-7', [
          { sku: 'NOPE', reason: 'unknown_sku' },
          { sku: 'SOFA', reason: 'out_of_stock' },
        ]),
        'HoldNotPlaced',
      ),
      mapped(
        'The `location` named is well formed but no location has that id. Answered as the other field errors are, one issue naming `location`',
        new UnknownLocation('warehouse-9'),
        'InvalidRequestBody',
      ),
      mapped(
        'The `holdid` exists with other lines, or with the same lines for a request that named another `destination` or ' +
          '`location` (`Hold <holdid> already exists with another destination or location`), or has ended (confirmed, ' +
          'released or expired): a holdid is used once',
        new HoldConflict('cart-7', 'hold_exists', 'already exists with other lines'),
      ),
      mapped(
        'The `holdid` exists with the same lines and routing for a request that allowed another `split` (absent counts as `none`); nothing changes',
        new HoldConflict('cart-7', 'split_otherwise', 'already exists with another split'),
        'Error',
        'HoldSplitOtherwise',
      ),
      mapped(
        `The plan, its lines split as they allow, needs more than the ${MAX_TRANSACTION_ITEMS} writes of one transaction, to hold ` +
          'its lines or to confirm them; nothing was held. Fewer lines allowed a `split`, or fewer lines, fit',
        new TooManyParts('hold', 'cart-7', 104, MAX_TRANSACTION_ITEMS),
      ),
    ],
  },
  'GET /holds/{holdid}': {
    operationId: 'getHold',
    summary: 'Read a hold',
    description: 'The hold as of now: `expired` the moment its `expires_at` passes. An ended hold stays readable for at least 24 hours.',
    pathParameters: { holdid: 'cart-7' },
    answers: [
      { status: 200, when: 'The hold exists', name: 'HoldRead', body: json('Hold', HOLD_EXAMPLE) },
      mapped('No hold has this `holdid`, or it ended more than 24 hours ago', new HoldNotFound('cart-7')),
    ],
  },
  'PATCH /holds/{holdid}': {
    operationId: 'extendHold',
    summary: "Change a hold's expiry",
    description: "Sets an active hold's `expires_at` to now + `ttl_seconds` (longer or shorter), for a checkout whose payment runs long.",
    pathParameters: { holdid: 'cart-7' },
    requestBody: { schema: 'HoldExtension', example: { ttl_seconds: 600 }, refused: { ttl_seconds: 0 } },
    answers: [
      { status: 200, when: 'The hold lasts until its new `expires_at`', name: 'HoldExtended', body: json('Hold', HOLD_EXAMPLE) },
      mapped('No hold has this `holdid`', new HoldNotFound('cart-7')),
      mapped('The hold is no longer active: it expired, was released, or was confirmed', new HoldConflict('cart-7', 'hold_ended', 'has expired: only an active hold can be extended')),
    ],
  },
  'DELETE /holds/{holdid}': {
    operationId: 'releaseHold',
    summary: 'Release a hold',
    description: 'Gives an active hold\'s units back to their batches at once, in one transaction.',
    pathParameters: { holdid: 'cart-7' },
    answers: [
      { status: 204, when: 'The hold is released, or had already been released or expired (a repeat); no body', name: 'HoldReleased' },
      mapped('No hold has this `holdid`', new HoldNotFound('cart-7')),
      mapped(
        "The hold was confirmed: its lines are an order's, cancelled with `DELETE /allocations/{orderid}/{sku}`",
        new HoldConflict('cart-7', 'hold_ended', "was confirmed to order order-7: cancel the order's lines instead"),
      ),
    ],
  },
  'POST /holds/{holdid}/confirm': {
    operationId: 'confirmHold',
    summary: 'Confirm a hold as an order',
    description:
      "The held lines become the order's lines, on the same batches, taking exactly the held units: they never compete " +
      'for stock again. One transaction. Confirmed lines are like any allocated line: read, cancelled, moved by a batch `PATCH`.',
    pathParameters: { holdid: 'cart-7' },
    requestBody: { schema: 'HoldConfirmation', example: { orderid: 'order-7' }, refused: { orderid: '' } },
    answers: [
      {
        status: 201,
        when: "The hold's lines are the order's",
        name: 'HoldConfirmed',
        body: json('OrderAllocations', { orderid: 'order-7', lines: [{ sku: 'LAMP', qty: 1, batchref: 'batch-1', location: 'default' }] }),
      },
      {
        status: 200,
        when: 'The hold was already confirmed to this order: a repeat',
        name: 'HoldAlreadyConfirmed',
        body: json('OrderAllocations', { orderid: 'order-7', lines: [{ sku: 'LAMP', qty: 1, batchref: 'batch-1', location: 'default' }] }),
      },
      mapped('No hold has this `holdid`', new HoldNotFound('cart-7')),
      mapped(
        'Nothing changed, and the message says why: the hold expired, was released, was confirmed to another order, or the ' +
          'order already has a line for one of its SKUs',
        new HoldConflict('cart-7', 'hold_ended', 'has expired: only an active hold can be confirmed'),
      ),
    ],
  },
  'GET /openapi.json': {
    operationId: 'getOpenApiDocument',
    summary: 'Read this OpenAPI document',
    description:
      'This document, as the deployed functions were built with it: what client generators and API references read. ' +
      `\`Cache-Control: ${OPENAPI_DOCUMENT_CACHE_CONTROL}\`: it changes with each deploy, under the same URL.`,
    answers: [
      {
        status: 200,
        when: 'Always: the document (the example is an excerpt)',
        name: 'OpenApiDocumentRead',
        body: json('OpenApiDocument', { openapi: OPENAPI_VERSION, info: { title: 'Allocation service', version: '0.2.0' }, paths: {} }),
        headers: { 'Cache-Control': OPENAPI_DOCUMENT_CACHE_CONTROL },
      },
    ],
    failures: [
      mapped(
        'The function ran out of its time budget, or, on the local server, its table is not ready yet: repeat the request ' +
          'after `Retry-After` seconds',
        new StoreUnavailable('example'),
        'Unavailable',
      ),
      mapped('The document could not be read: never a stack trace or a file system error text', new Error('example'), 'InternalError'),
      functionError,
    ],
  },
};
