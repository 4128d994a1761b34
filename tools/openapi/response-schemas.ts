/**
 * The schemas of what the API answers (docs/openapi.json's components): every view a handler
 * writes, and every error body, each closed (`additionalProperties: false`), by the names the
 * document gives them.
 */
import { CHANGE_REASONS } from '../../domain/adjustments';
import { MAX_LEAD_DAYS } from '../../domain/promises';
import { IMPORT_STATUSES, MAX_IMPORT_ERRORS } from '../../domain/imports';
import { UPLOAD_SECONDS } from '../../functions/imports/uploads';
import { CHANGE_KINDS } from '../../domain/stock-history';
import { ERROR_CODES, InvalidPathParameters, InvalidRequestBody } from '../../functions/http/errors';
import {
  MAX_QTY,
} from '../../functions/http/schemas';
import type * as z from 'zod/mini';

export type JsonSchema = z.core.JSONSchema.BaseSchema;

export const OPENAPI_VERSION = '3.1.0';

/** Typed as a plain string only here, where the names are being defined. */
export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

const identifier = ref('Identifier');
const locationId = ref('LocationId');
const arrivalDate = ref('ArrivalDate');
const quantity = { type: 'integer', minimum: 1, maximum: MAX_QTY } as const;
const units = (description: string) => ({ type: 'integer', minimum: 0, description }) as const;

/** Exactly these fields: the views name every field they show. */
const closedObject = (properties: Record<string, JsonSchema>, description: string, required = Object.keys(properties)): JsonSchema => ({
  type: 'object',
  description,
  properties,
  required,
  additionalProperties: false,
});

const listOf = (items: JsonSchema, description: string, minItems = 0): JsonSchema => ({
  type: 'array',
  description,
  items,
  ...(minItems > 0 ? { minItems } : {}),
});

const batchFields = {
  ref: identifier,
  sku: identifier,
  qty: { type: 'integer', minimum: 0, maximum: MAX_QTY, description: "The batch's total." },
  allocated: units('The units on its lines; above `qty` only while a PATCH that lowered `qty` still has lines to move.'),
  held: units('The units set aside by active holds.'),
  available: units('What a new line or hold can take: `qty - allocated - held`, never shown below 0.'),
  eta: arrivalDate,
  location: { ...locationId, description: 'The location the batch is at (a shipment: where it will arrive); `default` for a batch added without one.' },
} satisfies Record<string, JsonSchema>;

const issue = closedObject(
  {
    path: {
      type: 'string',
      description: "The field, its parts joined by dots (`lines.3.sku`), `\"\"` for the body itself; or the path parameter's name.",
    },
    message: {
      type: 'string',
      description:
        'The field\'s name (`the body` for the body itself), then that it is required and what it accepts, or what it must ' +
        'be: `qty is required: an integer from 1 to 1000000000`, `eta must be a date YYYY-MM-DD, or null`, `ref must not be blank`.',
    },
  },
  'One field, or one path parameter, and the first rule it breaks.',
);

const invalidInput = (message: string, description: string) =>
  closedObject({ message: { const: message }, code, issues: listOf(issue, 'One issue per field (or path parameter) that breaks a rule.', 1) }, description);

/** Each error's message as its class writes it. */
const messageOf = (InvalidInput: typeof InvalidRequestBody | typeof InvalidPathParameters) => new InvalidInput([]).message;

const message = { type: 'string', description: 'Human-readable; safe to show.' } as const;
const code = ref('ErrorCode');
const requestId = { type: 'string', description: 'The API Gateway request id, also in the request log line.' } as const;

/** Units of a line that shipped (docs/api.md, "Shipments"). */
const shipped = { type: 'integer', minimum: 1, maximum: MAX_QTY, description: 'The units of `qty` that shipped: absent while none has.' } as const;

/** A split line's parts (docs/api.md, "Split lines"). */
const parts = listOf(
  closedObject(
    { batchref: identifier, location: { ...locationId, description: 'The location of the batch.' }, qty: quantity, shipped },
    "Units of the line on one batch (those that shipped from it among them), and that batch's location.",
    ['batchref', 'location', 'qty'],
  ),
  "Present only for a line whose request allowed a `split`, even in one part: each part's batch, location and units, in the order the rule preferred them when the line was placed (a part a change of its batch moved takes the place of the one it left, or joins the line's part on its new batch). " +
    'A line in one part names its batch and location beside them too.',
  1,
);

/** What a stock level says of the shelf (docs/api.md, "GET /skus/{sku}/stock"). */
const onHand = units('Units on the shelf (in batches with `eta` null): available, held, and those lines hold that have not shipped.');
const committed = units('Units on the shelf that lines hold and that have not shipped: `on_hand` is `in_stock` + `committed` + the units held on the shelf.');

const listCursor = { type: 'string', description: 'Where the next page starts: send it back as `?cursor=`. Absent on the last page.' } as const;

export const responseSchemas = {
  BatchRef: closedObject(
    {
      batchref: { ...identifier, description: 'The batch the line is on: absent for a line in several parts.' },
      location: { ...locationId, description: 'The location of the batch, where the line is taken from: absent for a line in several parts.' },
      parts,
    },
    'The batch the line is allocated to, and its location; for a line whose request allowed a `split`, its parts.',
    [],
  ),
  RoutedLine: closedObject(
    {
      sku: identifier,
      qty: { ...quantity, description: 'The units allocated to the line: those that shipped among them.' },
      batchref: { ...identifier, description: 'The batch the line is on: absent for a line in several parts.' },
      location: { ...locationId, description: 'The location of the batch: absent for a line in several parts.' },
      parts,
      shipped,
    },
    'A line of an order or a hold, its batch, and where that batch is; for a line whose request allowed a `split`, its parts.',
    ['sku', 'qty'],
  ),
  RoutedOrder: closedObject(
    { orderid: identifier, lines: listOf(ref('RoutedLine'), 'Sorted by `sku`.', 1) },
    "The request's lines, each with its batch and that batch's location.",
  ),
  OrderAllocations: closedObject(
    { orderid: identifier, lines: listOf(ref('RoutedLine'), 'Sorted by `sku`.', 1) },
    "An order's lines, each with its batch and that batch's location.",
  ),
  Batch: closedObject(batchFields, 'A batch, and the units on its lines.'),
  Reallocation: closedObject(
    {
      orderid: identifier,
      sku: identifier,
      qty: quantity,
      from: identifier,
      batchref: { anyOf: [identifier, { type: 'null' }], description: 'The batch the line moved to, or `null` when it left its order.' },
    },
    "A line this request moved off the batch; a split line's part placed again over several batches, one for each, `qty` the units that went there.",
  ),
  ChangedBatch: closedObject(
    { ...batchFields, reallocated: listOf(ref('Reallocation'), 'The lines this request moved; `[]` once nothing is left to move.') },
    'The batch as `GET /batches/{ref}` shows it, and the lines the change moved.',
  ),
  StockBatch: closedObject(
    { ref: identifier, qty: batchFields.qty, held: batchFields.held, available: units('Units neither on a line nor held.'), eta: arrivalDate },
    'A batch with units available or held.',
  ),
  LocationStock: closedObject(
    {
      location: locationId,
      in_stock: units('Units available in its batches on the shelf (`eta` null).'),
      incoming: units('Units available in its shipments.'),
      held: units('Units set aside by active holds, in its batches.'),
      next_eta: { ...arrivalDate, description: 'The earliest `eta` among its shipments with stock, or `null`.' },
      on_hand: onHand,
      committed,
    },
    "A SKU's stock levels at one location.",
  ),
  SkuStock: closedObject(
    {
      sku: identifier,
      in_stock: units('Units available in batches on the shelf (`eta` null).'),
      incoming: units('Units available in shipments.'),
      held: units('Units set aside by active holds, in every batch.'),
      next_eta: { ...arrivalDate, description: 'The earliest `eta` among shipments with stock, or `null`.' },
      on_hand: onHand,
      committed,
      batches: listOf(ref('StockBatch'), 'The batches with units available or held, in the order allocation prefers them.'),
      locations: listOf(
        ref('LocationStock'),
        "The levels at each location that has one of `batches`, by the location's `priority`, then its `id`; with " +
          '`?location=`, that location alone, at zeros when it has none.',
      ),
    },
    "A SKU's stock levels, in all (the sums of `locations`) or, with `?location=`, at that location; a SKU whose batches are all empty answers zeros and `[]`.",
  ),
  ListedSku: closedObject(
    {
      sku: identifier,
      on_hand: onHand,
      committed,
      held: units('Units set aside by active holds, in its batches.'),
      available: units('Units neither on a line nor held, on the shelf and in shipments: `in_stock` + `incoming`.'),
      in_stock: units('Units available in batches on the shelf (`eta` null).'),
      incoming: units('Units available in shipments.'),
      next_eta: { ...arrivalDate, description: 'The earliest `eta` among shipments with stock, or `null`.' },
    },
    "A SKU's stock levels on a page of a list, as `GET /skus/{sku}/stock` reads them: in all, or at the list's location.",
  ),
  SkuList: closedObject(
    {
      skus: listOf(ref('ListedSku'), 'Each SKU once across the pages, in the order the service keeps them (not sorted across pages).'),
      cursor: listCursor,
    },
    'A page of every SKU ever added, with its stock levels in all.',
    ['skus'],
  ),
  LocationSkuList: closedObject(
    {
      location: locationId,
      skus: listOf(ref('ListedSku'), 'Each SKU once across the pages, in the order the service keeps them (not sorted across pages).'),
      cursor: listCursor,
    },
    'A page of the SKUs a batch of which was ever at the location, with their stock levels there.',
    ['location', 'skus'],
  ),
  Hold: closedObject(
    {
      holdid: identifier,
      status: {
        enum: ['active', 'confirmed', 'released', 'expired'],
        description: '`expired` the moment `expires_at` passes, whether or not anything has run since.',
      },
      expires_at: { type: 'string', format: 'date-time', description: 'When the hold ends unless confirmed, released or extended: ISO 8601 UTC, milliseconds.' },
      lines: listOf(ref('RoutedLine'), "Each held line, the batch holding it and that batch's location, sorted by `sku`.", 1),
      orderid: { ...identifier, description: 'The order its lines went to; only once confirmed.' },
    },
    'A hold and its status as of the moment it was read.',
    ['holdid', 'status', 'expires_at', 'lines'],
  ),
  Location: closedObject(
    {
      id: locationId,
      name: { type: 'string', minLength: 1, description: 'Shown to people; any text but control characters.' },
      priority: { type: 'integer', minimum: 0, maximum: 1000, description: 'The lower, the more preferred.' },
      serves: {
        type: 'array',
        minItems: 1,
        items: { type: 'string', pattern: '^(?:[A-Z]{2}|\\*)$' },
        description: 'The destinations it serves: `["*"]` for every one, or ISO 3166-1 alpha-2 country codes.',
      },
      active: { type: 'boolean', description: 'An inactive location takes no new line, hold or transfer; what it has stays.' },
      position: closedObject(
        { lat: { type: 'number', minimum: -90, maximum: 90 }, lng: { type: 'number', minimum: -180, maximum: 180 } },
        'Where it is, in degrees; absent when none was given.',
      ),
      handling_days: { type: 'integer', minimum: 0, maximum: MAX_LEAD_DAYS, description: 'Whole days between an order and its parcel leaving; absent when none was given.' },
      transit_days: {
        type: 'object',
        propertyNames: { pattern: '^(?:[A-Z]{2}|\\*)$' },
        additionalProperties: { type: 'integer', minimum: 0, maximum: MAX_LEAD_DAYS },
        description: 'Whole days a parcel takes, by destination country, `*` for any other; absent when none was given.',
      },
    },
    'A location: a place stock is kept. `default` exists from the start, `{"id": "default", "name": "Default", "priority": 0, "serves": ["*"], "active": true}` until replaced.',
    ['id', 'name', 'priority', 'serves', 'active'],
  ),
  PromisedPart: closedObject(
    { batchref: identifier, qty: quantity, eta: arrivalDate },
    "Units of a promised line from one batch, and that batch's `eta` (`null`: on the shelf).",
  ),
  PromisedLine: closedObject(
    { sku: identifier, qty: { ...quantity, description: "The line's units in this parcel: all of them, or a line split over locations' share here." }, parts: listOf(ref('PromisedPart'), 'In the order the line takes them.', 1) },
    "A line's units in one parcel, and the batches they come from.",
  ),
  Parcel: closedObject(
    {
      location: locationId,
      ships_on: { type: 'string', format: 'date', description: "The day it leaves (UTC): today when every part is on the shelf, else the latest part's `eta`, then the location's `handling_days` later." },
      arrives_by: { type: 'string', format: 'date', description: "`ships_on` and the location's `transit_days` for the destination's country; absent when the location names none, or the cart no `destination`." },
      lines: listOf(ref('PromisedLine'), 'Sorted by `sku`.', 1),
    },
    'What leaves one location.',
    ['location', 'ships_on', 'lines'],
  ),
  UnpromisedLine: closedObject(
    {
      sku: identifier,
      reason: { enum: ['unknown_sku', 'out_of_stock', 'no_location'] },
      promisable_qty: units('The most units a line of this SKU could be promised now, under its `split` and routing: 0 for `unknown_sku` and `no_location`.'),
    },
    'A line no plan can hold, why, as an order would refuse it, and how much could be.',
  ),
  CartPromise: closedObject(
    {
      ships_on: { type: 'string', format: 'date', description: "The day the last parcel ships (UTC); absent when a line is refused." },
      arrives_by: { type: 'string', format: 'date', description: 'The day the last parcel arrives, when every parcel says; absent otherwise.' },
      parcels: listOf(ref('Parcel'), 'The plan `POST /orders` would make now, a parcel for each location, by `location`; `[]` when a line is refused.'),
      refused: listOf(ref('UnpromisedLine'), 'The lines no plan can hold, in the order of the request; `[]` when every line is promised.'),
    },
    'What can be promised for a cart, by the rule that allocates it.',
    ['parcels', 'refused'],
  ),
  Locations: closedObject(
    { locations: listOf(ref('Location'), 'Every location, `default` among them, by `priority`, then `id`.', 1) },
    'Every location.',
  ),
  TransferMade: closedObject(
    {
      transferid: identifier,
      from_batchref: { ...identifier, description: 'The batch at `from` the units were taken from.' },
      ref: { ...identifier, description: 'The incoming batch at `to`: the `transferid`.' },
    },
    'The transfer, the batch its units came from, and the batch they arrive as.',
  ),
  Transfer: closedObject(
    {
      transferid: identifier,
      sku: identifier,
      qty: quantity,
      from: { ...locationId, description: 'Where the units came from.' },
      to: { ...locationId, description: 'Where they arrive.' },
      eta: { type: 'string', format: 'date', description: 'When they arrive, as the transfer was made; the incoming batch\'s own `eta` is `GET /batches/{ref}`\'s.' },
      from_batchref: { ...identifier, description: 'The batch at `from` the units were taken from, and go back to if the transfer is cancelled.' },
      ref: { ...identifier, description: 'The incoming batch at `to`: the `transferid`.' },
      status: { enum: ['active', 'cancelled'], description: '`cancelled` once `DELETE /transfers/{transferid}` gave its units back.' },
    },
    'A transfer as made, and whether it was cancelled.',
  ),
  Shipment: closedObject(
    {
      shipmentid: identifier,
      orderid: identifier,
      location: { ...locationId, description: 'Where the parcel left from.' },
      shipped_at: { type: 'string', format: 'date-time', description: 'When it shipped: ISO 8601 UTC, milliseconds.' },
      lines: listOf(
        closedObject(
          {
            sku: identifier,
            qty: quantity,
            parts: listOf(closedObject({ batchref: identifier, qty: quantity }, 'Units that left one batch.'), "The batches the units left, in the order of the line's parts.", 1),
          },
          'A line of the shipment: its units, and the batches they left.',
        ),
        'As the request named them.',
        1,
      ),
    },
    'A shipment as made: a parcel that left one location.',
  ),
  History: closedObject(
    {
      sku: identifier,
      entries: listOf(
        closedObject(
          {
            at: { type: 'string', format: 'date-time', description: "When the change happened: ISO 8601 UTC, milliseconds; a count's, when it was counted." },
            kind: {
              enum: [...CHANGE_KINDS],
              description:
                '`added`: the batch was added; `arrived`: its `eta` was set to null (with a change of `qty` in the same PATCH, if any); `shipped`; ' +
                '`adjusted`: by `POST /adjustments`, for its `reason`; `transferred_out`: a transfer took units from it; `transferred_in`: it is a ' +
                "transfer's incoming batch; `transfer_cancelled`: a cancel gave units back to it, or took its incoming batch away; `patched`: a `PATCH /batches/{ref}`.",
            },
            reason: { enum: [...CHANGE_REASONS], description: "Why: an adjustment's reason (a PATCH's is `correction`, a batch added's `received`), or `shipped`, `transferred`." },
            batchref: identifier,
            location: locationId,
            delta: { type: 'integer', description: "How the batch's `qty` changed: below 0 for units that left; 0 for an arrival alone." },
            qty_after: units("The batch's `qty` as the change left it."),
            reference: { ...identifier, description: 'The `shipmentid`, `adjustmentid` or `transferid` behind it; absent for a PATCH and a batch added.' },
            actor: { type: 'string', description: "Who made it: the caller's IAM principal (its ARN) on AWS, `anonymous` on a public API, `local` on the local server." },
          },
          'One change of a batch\'s units on hand.',
          ['at', 'kind', 'reason', 'batchref', 'location', 'delta', 'qty_after', 'actor'],
        ),
        'Newest first.',
      ),
      cursor: { type: 'string', description: 'Where the next page starts: send it back as `?cursor=`. Absent on the last page.' },
    },
    "A page of a SKU's history of on-hand stock.",
    ['sku', 'entries'],
  ),
  Adjustment: closedObject(
    {
      adjustmentid: identifier,
      ref: identifier,
      reason: { enum: ['received', 'counted', 'damaged', 'lost', 'found', 'returned', 'correction'] },
      before: units("The batch's `qty` before the adjustment."),
      after: units("The batch's `qty` after it: a count's, less what the batch shipped since it was taken."),
      reallocated: listOf(ref('Reallocation'), 'The lines this request moved off the batch; `[]` once nothing is left to move.'),
    },
    "The adjustment, the batch's `qty` before and after it, and the lines it moved.",
  ),
  Import: closedObject(
    {
      importid: identifier,
      format: { enum: ['jsonl', 'csv'], description: 'The format of its file; absent for rows sent inline.' },
      status: {
        enum: [...IMPORT_STATUSES],
        description:
          '`awaiting_upload` until its file arrives; `running` while rows are checked, then applied; `completed` once every row is done; ' +
          '`failed` when its file is no feed (`file_refused`), or it validated first and a row was refused, with nothing applied.',
      },
      dry_run: { type: 'boolean', description: 'Rows judged, no stock written.' },
      validate_first: { type: 'boolean', description: 'Every row checked before any was applied.' },
      counts: closedObject(
        {
          total: units('The rows of the feed checked so far: all of them once every row is checked, before any is applied.'),
          done: units('The rows run so far.'),
          applied: units('Rows that changed stock (in a dry run: that would).'),
          unchanged: units('Rows that found stock as they say it: nothing written.'),
          conflicted: units("Rows whose `expected_qty` was not the batch's `qty`."),
          stale: units('Counts older than one already applied to their batch.'),
          invalid: units('Rows their schema, or an unknown location, refused.'),
          failed: units('Rows the rules refused: another SKU under their `ref`, a count of no batch.'),
        },
        "The rows, and what those run did.",
      ),
      started_at: { type: 'string', format: 'date-time' },
      finished_at: { type: 'string', format: 'date-time', description: 'Absent while it runs.' },
      errors: listOf(
        closedObject(
          {
            row: { type: 'integer', minimum: 1, description: 'The row, numbered from 1.' },
            outcome: { enum: ['conflicted', 'stale', 'invalid', 'failed'] },
            code: { ...code, description: 'The code its own request would have had.' },
            message,
          },
          'A row that did not apply, and why.',
        ),
        `The first ${MAX_IMPORT_ERRORS} rows that did not apply, by row number.`,
      ),
      file_refused: closedObject(
        { message, row: { type: 'integer', minimum: 1, description: 'The row where the file broke, when there is one to name.' } },
        'Why its file is no feed (empty, not in its format, longer than its bound): nothing of it was applied.',
        ['message'],
      ),
      upload: closedObject(
        {
          url: { type: 'string', format: 'uri', description: 'Where to PUT the file: on AWS, a presigned URL of the stack\'s bucket of feeds.' },
          method: { const: 'PUT' },
          headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Send these with the file, as they are: `If-None-Match: *` keeps an import to the first file it gets.' },
          expires_at: { type: 'string', format: 'date-time', description: `When the URL stops taking the file: ${UPLOAD_SECONDS / 60} minutes on. A repeat of the request gives a new one.` },
        },
        'Where and how to send the file; in the answer to POST /imports only, while the import awaits it.',
      ),
    },
    'An import as it stands.',
    ['importid', 'status', 'dry_run', 'validate_first', 'counts', 'started_at', 'errors'],
  ),
  ImportRows: closedObject(
    {
      importid: identifier,
      rows: listOf(
        closedObject(
          {
            row: { type: 'integer', minimum: 1, description: 'The row, numbered from 1.' },
            outcome: { enum: ['applied', 'unchanged', 'conflicted', 'stale', 'invalid', 'failed'] },
            code: { ...code, description: 'For a row that did not apply: the code its own request would have had.' },
            message: { ...message, description: 'For a row that did not apply: why.' },
          },
          'A row of the import, and what it did.',
          ['row', 'outcome'],
        ),
        'By row number: each row done so far (its chunk of 25 recorded); for an import that validated first and was failed by its check, the rows the check refused.',
      ),
      cursor: listCursor,
    },
    "A page of an import's rows, and what each did.",
    ['importid', 'rows'],
  ),
  QtyChanged: closedObject(
    { message, code: { const: 'qty_changed' }, qty: units("The batch's `qty` now.") },
    "The batch's `qty` is not `expected_qty`; nothing changed.",
  ),
  TooFewUnshipped: closedObject(
    {
      message,
      code: { const: 'too_few_unshipped' },
      location: { ...locationId, description: 'Where the shipment leaves from.' },
      lines: listOf(
        closedObject(
          { sku: identifier, qty: { ...quantity, description: 'The units the shipment asks.' }, unshipped: units('The units of the line not yet shipped at `location`.') },
          'A line with fewer units not yet shipped at the location than the shipment asks.',
        ),
        'Every such line.',
        1,
      ),
    },
    'Some lines have fewer units not yet shipped at the location than the shipment asks; nothing was shipped.',
  ),
  HoldNotPlaced: closedObject(
    {
      message,
      code,
      lines: listOf(
        closedObject({ sku: identifier, reason: { enum: ['unknown_sku', 'out_of_stock', 'no_location'] } }, 'A line that cannot be held, and why.'),
        'Every line that fails.',
        1,
      ),
    },
    'Some line of the hold cannot be held; nothing was held.',
  ),
  ErrorCode: {
    enum: [...ERROR_CODES],
    description: 'What the error means, for a program to act on; stable, where `message` may be reworded. docs/api.md, "Error codes", says what each means and what to do.',
  },
  Error: closedObject({ message, code }, 'Every error answers JSON with a human-readable `message` and a machine-readable `code`.'),
  GatewayError: closedObject({ message }, 'Answered by API Gateway itself (or by the local server as API Gateway would), before any function runs: no `code`.'),
  LineRefused: closedObject(
    {
      message,
      code,
      reason: {
        enum: ['out_of_stock', 'no_location'],
        description:
          '`out_of_stock`: no batch at an eligible location can take the whole line; `no_location`: no location is eligible ' +
          '(none active serves the `destination`, or the `location` named is inactive or serves not the `destination`).',
      },
    },
    'The line cannot be allocated, and why; nothing was allocated.',
  ),
  InvalidRequestBody: invalidInput(messageOf(InvalidRequestBody), 'The body breaks the bounds of its fields.'),
  // Named for the path parameters it was first written for; renaming it would rename a type of the published client.
  InvalidPathParameters: invalidInput(messageOf(InvalidPathParameters), 'A path or query parameter breaks a rule of what it names (an identifier, a location id).'),
  OrderNotAllocated: closedObject(
    {
      message,
      code,
      lines: listOf(
        closedObject({ sku: identifier, reason: { enum: ['unknown_sku', 'out_of_stock', 'no_location'] } }, 'A line that cannot be allocated, and why.'),
        'Every line that fails.',
        1,
      ),
    },
    'Some new line of the order cannot be allocated; nothing was allocated.',
  ),
  OrderLinesConflict: closedObject(
    { message, code, lines: listOf(closedObject({ sku: identifier, qty: { ...quantity, description: 'The qty allocated.' } }, 'A line allocated with another qty.'), 'Every such line.', 1) },
    'Lines of the order are already allocated with other quantities; nothing changes.',
  ),
  OrderLinesRoutedOtherwise: closedObject(
    { message, code: { const: 'routed_otherwise' }, lines: listOf(closedObject({ sku: identifier }, 'A line allocated for another `destination` or `location`.'), 'Every such line.', 1) },
    'Lines of the order are already allocated for a request that named another `destination` or `location`; nothing changes.',
  ),
  OrderLinesSplitOtherwise: closedObject(
    { message, code: { const: 'split_otherwise' }, lines: listOf(closedObject({ sku: identifier }, 'A line allocated for a request that allowed it another `split`.'), 'Every such line.', 1) },
    'Lines of the order are already allocated for a request that allowed them another `split`; nothing changes.',
  ),
  Unavailable: closedObject({ message, code, request_id: requestId }, 'Nothing was half-written: repeat the same request after `Retry-After` seconds.'),
  OpenApiDocument: {
    type: 'object',
    description: 'An OpenAPI 3.1 document: this one.',
    properties: {
      openapi: { const: OPENAPI_VERSION },
      info: { type: 'object', required: ['title', 'version'] },
      paths: { type: 'object' },
    },
    required: ['openapi', 'info', 'paths'],
  },
  InternalError: closedObject(
    { message, code, request_id: requestId },
    "Never a stack trace or a store error text. No `code` nor `request_id` when the function failed instead of answering (API Gateway's own 500).",
    ['message'],
  ),
} satisfies Record<string, JsonSchema>;
