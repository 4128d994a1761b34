import * as z from 'zod/mini';
import { ADJUSTMENT_REASONS } from './adjustments';
import { MAX_LEAD_DAYS } from './promises';

/*
 * What the service tells the world, once each thing has happened (docs/events.md). These shapes
 * are a published contract, versioned and exported as JSON Schema (docs/events/), so they are the
 * one place in the domain that uses zod: zod is a pure library (no I/O), and defining each shape
 * once as a schema gives both the TypeScript type and the document a consumer reads.
 */

/*
 * `@__PURE__` marks each schema call as free of side effects, so a bundle that uses only the types
 * and `domainEvent` (the stream consumer) leaves zod out: 21 KB less to load at its cold start.
 */

/** Bumped, with a new schema file, whenever a field changes meaning or goes away; added fields keep it. */
export const EVENT_VERSION = 1;

const text = /* @__PURE__ */ z.string().check(/* @__PURE__ */ z.minLength(1));
const quantity = /* @__PURE__ */ z.int().check(/* @__PURE__ */ z.gte(1));
const arrivalDate = /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.iso.date());
/** The id of the location of the batch an event is about: `default` for a batch added without one. */
const location = text;

/** What both transfer events say of their transfer: what moved, from which batch, to which. */
const transfer = {
  transferid: text,
  sku: text,
  qty: quantity,
  from: text,
  to: text,
  eta: /* @__PURE__ */ z.iso.date(),
  from_batchref: text,
  ref: text,
};

/**
 * What an event of a split line's part adds: the whole line's qty and how far it may be split. Absent
 * for a whole line, whose event's `qty` is the line's.
 */
const splitPart = {
  line_qty: /* @__PURE__ */ z.optional(quantity),
  split: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.enum(['batches', 'locations'])),
};

/**
 * What every hold event says of its hold, so that a consumer needs no other event to know what it
 * held: its lines, each on its batch (a split line, each part on its own, with `line_qty` and
 * `split`), and the time it lasts (or lasted) until.
 */
const hold = {
  holdid: text,
  expires_at: /* @__PURE__ */ z.iso.datetime(),
  lines: /* @__PURE__ */ z
    .array(/* @__PURE__ */ z.object({ sku: text, qty: quantity, batchref: text, location, ...splitPart }))
    .check(/* @__PURE__ */ z.minLength(1)),
};

const rows = /* @__PURE__ */ z.int().check(/* @__PURE__ */ z.gte(0));
/** An import's rows, and what those done did (docs/api.md, "Imports"). */
const importCounts = { total: rows, done: rows, applied: rows, unchanged: rows, conflicted: rows, stale: rows, invalid: rows, failed: rows };

/** Every event's `detail` begins with these. */
const envelope = {
  /** The same for every delivery of one event: a consumer drops an id it has seen. */
  id: text,
  version: /* @__PURE__ */ z.literal(EVENT_VERSION),
  /** When the change was committed (from the item written), ISO 8601 in UTC. */
  time: /* @__PURE__ */ z.iso.datetime(),
};

/** Who made a change of stock (domain/stock-history.ts): absent on changes recorded before they were named. */
const actor = { actor: /* @__PURE__ */ z.optional(text) };

/** Each event's description says when it is emitted; it goes into the event's JSON Schema too. */
export const eventSchemas = {
  Allocated: /* @__PURE__ */ z
    .object({ ...envelope, orderid: text, sku: text, qty: quantity, batchref: text, location, ...splitPart })
    .check(
      /* @__PURE__ */ z.describe(
        'An order line was allocated to a batch, at `location`: by POST /allocate, by POST /orders, by the confirm of a hold, or moved there by a change of its batch. ' +
          'A split line has one event for each part: `qty` units on `batchref`, of a line of `line_qty` split as `split` allowed.',
      ),
    ),
  Deallocated: /* @__PURE__ */ z
    .object({ ...envelope, orderid: text, sku: text, qty: quantity, batchref: text, location, reason: /* @__PURE__ */ z.enum(['cancelled', 'reallocated']), ...splitPart })
    .check(
      /* @__PURE__ */ z.describe(
        'An order line left a batch, at `location`: `cancelled` by DELETE /allocations/{orderid}/{sku}, or `reallocated` by a change of ' +
          'the batch (an Allocated to another batch follows, unless no batch had room). A split line has one event for each part that left a batch, as Allocated has.',
      ),
    ),
  BatchAdded: /* @__PURE__ */ z
    .object({ ...envelope, ref: text, sku: text, qty: quantity, eta: arrivalDate, location, ...actor })
    .check(
      /* @__PURE__ */ z.describe(
        'A batch was registered by POST /add_batch, at `location` (`default` when the request named none; for a shipment, where it will arrive), ' +
          "or by POST /transfers, as the transfer's incoming batch at its `to` (a TransferCreated comes with it). `actor`: who added it, as the history names them.",
      ),
    ),
  BatchChanged: /* @__PURE__ */ z
    .object({
      ...envelope,
      ref: text,
      sku: text,
      qty: /* @__PURE__ */ z.int().check(/* @__PURE__ */ z.gte(0)),
      eta: arrivalDate,
      location,
      reason: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.enum([...ADJUSTMENT_REASONS, 'shipped', 'transferred'])),
      ...actor,
    })
    .check(
      /* @__PURE__ */ z.describe(
        "PATCH /batches/{ref} changed a batch's qty or eta (`reason` `correction`), POST /adjustments its units on hand (its " +
          '`reason`), a transfer took units from it or gave them back on its cancel (`transferred`: TransferCreated, TransferCancelled), ' +
          'or a shipment took units of its lines off it (`shipped`: Shipped); the detail carries its new values, and its location. ' +
          '`reason` is absent for a change recorded before changes named one. `actor`: who made the change, as the history names them.',
      ),
    ),
  OutOfStock: /* @__PURE__ */ z
    .object({
      ...envelope,
      sku: text,
      orderid: text,
      qty: quantity,
      destination: /* @__PURE__ */ z.optional(
        /* @__PURE__ */ z.object({
          country: text,
          position: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.object({ lat: /* @__PURE__ */ z.number(), lng: /* @__PURE__ */ z.number() })),
        }),
      ),
      location: /* @__PURE__ */ z.optional(location),
    })
    .check(
      /* @__PURE__ */ z.describe(
        'An allocation (POST /allocate, or a line of POST /orders) was refused for lack of stock; not for an unknown SKU. ' +
          '`destination` and `location` are those the request named, which limited where the line could come from: present, ' +
          'the refusal says there was no stock for it there (at that location, or at the locations serving that destination), ' +
          'not that the SKU is out of stock everywhere; absent, no batch at any active location could take it.',
      ),
    ),
  HoldPlaced: /* @__PURE__ */ z
    .object({ ...envelope, ...hold })
    .check(/* @__PURE__ */ z.describe("POST /holds placed a hold: each line's units are set aside on its batch until expires_at.")),
  HoldExtended: /* @__PURE__ */ z
    .object({ ...envelope, ...hold })
    .check(/* @__PURE__ */ z.describe('PATCH /holds/{holdid} extended an active hold; expires_at is its new expiry.')),
  HoldReleased: /* @__PURE__ */ z
    .object({ ...envelope, ...hold, reason: /* @__PURE__ */ z.enum(['released', 'expired']) })
    .check(
      /* @__PURE__ */ z.describe(
        'A hold ended and its units went back to their batches: `released` while it lasted (by DELETE /holds/{holdid}, or by a change ' +
          'that left one of its batches fewer units than its lines and holds take), or `expired` once its time had passed (by the ' +
          'sweeper, or sooner by one of those).',
      ),
    ),
  HoldConfirmed: /* @__PURE__ */ z
    .object({ ...envelope, ...hold, orderid: text })
    .check(
      /* @__PURE__ */ z.describe(
        "POST /holds/{holdid}/confirm made a hold's lines the order's, on the same batches: an Allocated for each line comes with it.",
      ),
    ),
  LocationChanged: /* @__PURE__ */ z
    .object({
      ...envelope,
      location: text,
      name: text,
      priority: /* @__PURE__ */ z.int().check(/* @__PURE__ */ z.gte(0)),
      serves: /* @__PURE__ */ z.array(text).check(/* @__PURE__ */ z.minLength(1)),
      active: /* @__PURE__ */ z.boolean(),
      position: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.object({ lat: /* @__PURE__ */ z.number(), lng: /* @__PURE__ */ z.number() })),
      handling_days: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.int().check(/* @__PURE__ */ z.gte(0), /* @__PURE__ */ z.lte(MAX_LEAD_DAYS))),
      transit_days: /* @__PURE__ */ z.optional(
        /* @__PURE__ */ z.record(/* @__PURE__ */ z.string().check(/* @__PURE__ */ z.regex(/^(?:[A-Z]{2}|\*)$/)), /* @__PURE__ */ z.int().check(/* @__PURE__ */ z.gte(0), /* @__PURE__ */ z.lte(MAX_LEAD_DAYS))),
      ),
    })
    .check(
      /* @__PURE__ */ z.describe(
        'PUT /locations/{id} created a location, or replaced one with something else (a repeat of the same writes nothing and ' +
          'announces nothing); the detail carries the location whole as it is now, `location` its id. The built-in `default` ' +
          'has none until it is first replaced.',
      ),
    ),
  TransferCreated: /* @__PURE__ */ z
    .object({ ...envelope, ...transfer })
    .check(
      /* @__PURE__ */ z.describe(
        'POST /transfers took `qty` from batch `from_batchref` at `from` (a BatchChanged of it comes with it) and added the incoming ' +
          'batch `ref` at `to`, arriving on `eta` (a BatchAdded of it comes with it).',
      ),
    ),
  TransferCancelled: /* @__PURE__ */ z
    .object({ ...envelope, ...transfer })
    .check(
      /* @__PURE__ */ z.describe(
        'DELETE /transfers/{transferid} gave the units back to batch `from_batchref` (a BatchChanged of it comes with it) and removed the ' +
          'incoming batch `ref`, from which nothing had been taken.',
      ),
    ),
  Shipped: /* @__PURE__ */ z
    .object({
      ...envelope,
      shipmentid: text,
      orderid: text,
      location,
      lines: /* @__PURE__ */ z
        .array(
          /* @__PURE__ */ z.object({
            sku: text,
            qty: quantity,
            parts: /* @__PURE__ */ z.array(/* @__PURE__ */ z.object({ batchref: text, qty: quantity })).check(/* @__PURE__ */ z.minLength(1)),
          }),
        )
        .check(/* @__PURE__ */ z.minLength(1)),
      ...actor,
    })
    .check(
      /* @__PURE__ */ z.describe(
        'POST /shipments shipped units of an order\'s lines from `location`: each line\'s units, and the batches they left (`parts`, ' +
          "in the order of the line's parts). A BatchChanged of each batch comes with it, its `qty` lower by the units that left it.",
      ),
    ),
  ImportCompleted: /* @__PURE__ */ z
    .object({
      ...envelope,
      importid: text,
      status: /* @__PURE__ */ z.enum(['completed', 'failed']),
      dry_run: /* @__PURE__ */ z.boolean(),
      ...importCounts,
    })
    .check(
      /* @__PURE__ */ z.describe(
        'POST /imports ran every row of an import (`completed`: some may not have applied), or refused a row before applying any ' +
          '(`failed`); the detail carries its counts. Its rows\' changes are announced as their own routes\' are (BatchAdded, ' +
          'BatchChanged); a row that changed nothing announces nothing.',
      ),
    ),
} as const;

export type EventName = keyof typeof eventSchemas;
export const eventNames = /* @__PURE__ */ Object.keys(eventSchemas) as EventName[];

export type EventDetail<Name extends EventName> = z.infer<(typeof eventSchemas)[Name]>;

/** One event: its name (EventBridge's `detail-type`) and its detail. */
export type DomainEvent = { [Name in EventName]: { readonly name: Name; readonly detail: EventDetail<Name> } }[EventName];

/** Builds an event of the current version; the caller supplies its id and the time of the change. */
export const domainEvent = <Name extends EventName>(
  name: Name,
  fields: Omit<EventDetail<Name>, 'version'>,
): Extract<DomainEvent, { name: Name }> => {
  const { id, time, ...rest } = fields as { id: string; time: string };
  return { name, detail: { id, version: EVENT_VERSION, time, ...rest } } as Extract<DomainEvent, { name: Name }>;
};
