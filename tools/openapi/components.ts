/**
 * The document's `components.schemas`: the request bodies exported from the zod schemas the
 * handlers validate with (functions/http/schemas.ts), and the response bodies, which the handlers
 * build by hand (their views, and errors.ts's mapping), so they are written here as JSON Schema.
 */
import * as z from 'zod/mini';
import { DEFAULT_HOLD_SECONDS } from '../../domain/holds';
import { MAX_INLINE_ROWS } from '../../domain/imports';
import { MAX_FEED_BYTES } from '../../functions/imports/feed';
import { DEFAULT_HISTORY_LIMIT, MAX_HISTORY_LIMIT } from '../../domain/stock-history';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../../domain/stock-listings';
import {
  MAX_IDENTIFIER_CHARACTERS,
  arrivalDateSchema,
  batchChangeSchema,
  batchSchema,
  eachCountryOnce,
  eachSkuOnce,
  historyCursorSchema,
  historyLimitSchema,
  listCursorSchema,
  listLimitSchema,
  identifierSchema,
  inNfc,
  locationIdSchema,
  locationSchema,
  namesAListPosition,
  namesAPosition,
  pathParameterSchemaOf,
  adjustmentSchema,
  countedQty,
  notZero,
  qtyOrDelta,
  qtyOrEta,
  shipmentSchema,
  transferSchema,
} from '../../functions/http/schemas';
import { cartSchema, holdConfirmationSchema, holdExtensionSchema, holdSchema, orderLineSchema, orderSchema } from '../../functions/http/order-schemas';
import { batchRowSchema, countRowSchema, importRowsCursorSchema, importSchema, namesAnImportRow, placeCountRowSchema, rowsOrFile } from '../../functions/http/import-schemas';
import { nfcFormat, uniqueItemPropertiesKeyword } from './extensions';
import { type JsonSchema, ref, responseSchemas } from './response-schemas';

export type { JsonSchema } from './response-schemas';

export { OPENAPI_VERSION } from './response-schemas';

/**
 * The refinements of functions/http/schemas.ts, which zod's export drops, each as the document
 * states it. A refinement missing here fails the generation rather than the document.
 */
const REFINEMENTS = new Map<object, (schema: JsonSchema) => void>([
  [
    inNfc,
    (schema) => {
      schema.format = nfcFormat.name;
    },
  ],
  [
    eachSkuOnce,
    (schema) => {
      schema[uniqueItemPropertiesKeyword.name] = ['sku'];
    },
  ],
  [
    eachCountryOnce,
    (schema) => {
      schema.uniqueItems = true;
    },
  ],
  // JSON Schema can say this one; zod cannot, as it cannot see what a refinement's function tests.
  [
    qtyOrEta,
    (schema) => {
      schema.anyOf = [{ required: ['qty'] }, { required: ['eta'] }];
    },
  ],
  [
    qtyOrDelta,
    (schema) => {
      schema.oneOf = [{ required: ['qty'] }, { required: ['delta'] }];
    },
  ],
  [
    rowsOrFile,
    (schema) => {
      schema.oneOf = [{ required: ['rows'] }, { required: ['format'] }];
    },
  ],
  [
    countedQty,
    (schema) => {
      schema.dependentRequired = { counted_at: ['qty'] };
    },
  ],
  [
    notZero,
    (schema) => {
      schema.not = { const: 0 };
    },
  ],
  // Opaque to clients: the pattern is all a schema can say, and the component's description says the rest.
  [namesAPosition, () => {}],
  [namesAListPosition, () => {}],
  [namesAnImportRow, () => {}],
]);

const writeRefinements = ({ zodSchema, jsonSchema }: { zodSchema: z.core.$ZodType; jsonSchema: JsonSchema }) => {
  for (const check of zodSchema._zod.def.checks ?? []) {
    if (check._zod.def.check !== 'custom') continue;
    const write = REFINEMENTS.get(check);
    if (!write) {
      throw new Error(
        'A refinement in functions/http/schemas.ts has no JSON Schema, so the document would not state it: ' +
          'write the rule as a check zod exports (a pattern, a bound), or say in tools/openapi/components.ts how the document states it.',
      );
    }
    write(jsonSchema);
  }
};

/** Each identifier rule, in the order they are checked, and a value that breaks it and no earlier one. */
const IDENTIFIER_RULES: readonly (readonly [rule: string, breaking: string])[] = [
  ['at least 1 character', ''],
  [`at most ${MAX_IDENTIFIER_CHARACTERS} characters, counted as code points (an emoji counts once)`, 'x'.repeat(MAX_IDENTIFIER_CHARACTERS + 1)],
  ['not blank', ' '],
  ['no white space at either end', 'LAMP '],
  ['no U+FFFD, the character a lenient decoder puts for bytes it could not read', 'LAMP\uFFFD'],
  [
    'no invisible or control characters: controls, format characters (zero-width space and joiner, byte order and ' +
      'bidirectional marks: so emoji joined by U+200D are refused), lone surrogates, line and paragraph separators, ' +
      'and spaces other than U+0020',
    'LA\u200BMP',
  ],
  [`in Unicode normalization form NFC (format \`${nfcFormat.name}\`): refused, not normalized, so the id stored is the id sent`, 'cafe\u0301'],
];

/** Each rule with the message of the issue a 400 carries for it, as the schema answers. */
const identifierRulesText = () =>
  IDENTIFIER_RULES.map(([rule, breaking]) => {
    const issues = identifierSchema.safeParse(breaking).error?.issues ?? [];
    if (issues.length !== 1) throw new Error(`${JSON.stringify(breaking)} should break exactly the identifier rule "${rule}"`);
    return `- ${rule}: \`${issues[0]?.message}\``;
  }).join('\n');

/** The request bodies, by the names the document gives them. */
export const requestBodySchemas = {
  OrderLine: orderLineSchema,
  NewBatch: batchSchema,
  BatchChange: batchChangeSchema,
  Order: orderSchema,
  Cart: cartSchema,
  NewHold: holdSchema,
  HoldExtension: holdExtensionSchema,
  HoldConfirmation: holdConfirmationSchema,
  LocationDefinition: locationSchema,
  NewTransfer: transferSchema,
  NewShipment: shipmentSchema,
  NewAdjustment: adjustmentSchema,
  NewImport: importSchema,
} as const;

export type RequestBodyName = keyof typeof requestBodySchemas;

const REQUEST_BODY_DESCRIPTIONS: Record<RequestBodyName, string> = {
  OrderLine:
    'An order line, identified by (`orderid`, `sku`). `destination` (a country, ISO 3166-1 alpha-2, and the point the goods ' +
    'go to, for the distance) limits the batches to those at active locations that serve the country; `location` to those ' +
    'at that one location (a pickup in store, a sale at the counter), which must exist. `split` allows the line to come ' +
    'from several batches: `batches` at one location (one parcel), `locations` at several; `none`, or absent, puts it whole ' +
    'in one batch. The line records all three: a change of its batch moves it only where they allow, and a repeat names them ' +
    'again. Any other field is refused.',
  NewBatch:
    'A batch: its `ref` is unique across all SKUs. `eta` is required, `null` for a batch in stock. `location`: the id of ' +
    'the location it is at (a shipment: where it will arrive), which must exist; `default` when absent. Any other field is refused.',
  BatchChange:
    "A change of a batch: `qty` or `eta`, or both. `qty` is the batch's new total (0 empties it): its lines stay, so " +
    '`available` moves by the difference. Any other field (`ref` and `sku` among them) is refused.',
  Order:
    `A whole order: every line is allocated, or none. Each SKU at most once (\`${uniqueItemPropertiesKeyword.name}\`). ` +
    '`destination` and `location` limit where every line may come from, as for one line (`OrderLine`). `split`, on the order ' +
    'or on a line, allows a line to come from several batches, as for one line: a line\'s own `split` first, then the ' +
    'order\'s; `none` when neither names one. Any other field is refused.',
  Cart:
    'A cart to promise: the lines, `destination`, `location` and `split` of an `Order`, with no `orderid`, since nothing is ' +
    'recorded. Each SKU at most once ' +
    `(\`${uniqueItemPropertiesKeyword.name}\`). Any other field is refused.`,
  NewHold:
    'A hold: its lines are held all or none, each whole in one batch or, as far as its `split` (or the hold\'s) allows, in ' +
    'parts, as an order\'s are. Each SKU at most once ' +
    `(\`${uniqueItemPropertiesKeyword.name}\`). \`ttl_seconds\`: how long it lasts, from now; ${DEFAULT_HOLD_SECONDS} when absent. ` +
    '`destination` and `location` limit where every line may come from, as for an order; the hold records them and each ' +
    'line\'s `split`, a repeat names them again, and its confirmed lines record them. Any other field is refused.',
  HoldExtension: "A hold's new lifetime: its `expires_at` becomes now + `ttl_seconds`. Any other field is refused.",
  HoldConfirmation: 'The order the hold\'s lines become lines of. Any other field is refused.',
  LocationDefinition:
    'A location, whole: a PUT replaces every field, so `active` absent is `true` and `position` absent is none (one stored ' +
    'before is removed). `priority`: the lower, the more preferred. `serves`: the destinations it serves, `["*"]` for ' +
    'every one, or ISO 3166-1 alpha-2 country codes, each once. `handling_days`: the whole days between an order and its ' +
    'parcel leaving, none when absent. `transit_days`: the whole days a parcel takes, by destination country, `*` for any ' +
    'other; a promise gives no `arrives_by` for a destination it names no time for. Its id is the path\'s: an `id` sent ' +
    '(as `GET` shows it) must be the same. Any other field is refused.',
  NewTransfer:
    'A transfer: `qty` units of `sku` taken from one batch in stock at location `from`, sent to location `to`, where they ' +
    'arrive on `eta` (a date: the incoming batch is a shipment) as a batch whose `ref` is the `transferid`. `from` and `to` ' +
    'must be active locations that exist, and differ. Any other field is refused.',
  NewShipment:
    "A shipment: `qty` units of each line named (by `sku`) of order `orderid`, leaving from `location`, one parcel from one " +
    "place: the line's units there, from its parts there in their order (a whole line: its batch). `location` may be left " +
    "out when the order's unshipped units are all at one location. Each SKU at most once " +
    `(\`${uniqueItemPropertiesKeyword.name}\`), up to 25 lines. Any other field is refused.`,
  NewAdjustment:
    "A change of one batch's units on hand, for its `reason`: `qty` sets them, `delta` adds (or, below 0, takes) some; " +
    'exactly one of the two. `counted_at`, with `qty` only: when the units were counted, within the last 30 days and not ' +
    'in the future; the count is applied as of then (the units the batch shipped since are taken off it), and one older ' +
    'than the last count applied to the batch changes nothing. `expected_qty`: the batch\'s `qty` as last read; the change ' +
    'applies only to that. `note`: for people. Any other field is refused.',
  NewImport:
    `An import: its \`importid\`, and either its \`rows\` (1 to ${MAX_INLINE_ROWS}) or the \`format\` of a file of them ` +
    `(\`jsonl\` or \`csv\`, at most ${MAX_FEED_BYTES / 1024 ** 3} GiB, to be sent to the answer's \`upload\`), numbered from 1 in their order. Each row is ` +
    'checked on its own, as an `ImportPlaceCountRow` when it has `on_hand`, as an `ImportCountRow` when it has `counted_at` and ' +
    'as an `ImportBatchRow` otherwise, so that a row ' +
    'refused is counted and named by its number rather than refusing the request. `dry_run` (default false): judge each ' +
    'row, write no stock. `validate_first` (default true): one refused row fails the import before any is applied. Any ' +
    'other field is refused.',
};

/** The request schemas, exported from zod, by the names the document gives them. */
const requestSchemas = () => {
  const registry = z.registry<{ id: string; description: string; examples?: unknown[]; maxLength?: number }>();
  registry.add(identifierSchema, {
    id: 'Identifier',
    description:
      'An `orderid`, `sku` or `ref`: a key, compared code point by code point, so its rules keep two ids that look the ' +
      'same from being two orders. Look-alike letters of different scripts (Latin `a`, Cyrillic `а`) are different ids. ' +
      'The rules, in the order they are checked; a field (or path parameter) that breaks some gets one issue, for the ' +
      `first, its message the field's name and the words shown (\`ref must not be blank\`):\n\n${identifierRulesText()}`,
    examples: ['order-1', 'LAMPE À POSER', '注文-1', '📦-1'],
    // The pattern zod exports already bounds the length; this says it the way client generators read.
    maxLength: MAX_IDENTIFIER_CHARACTERS,
  });
  registry.add(locationIdSchema, {
    id: 'LocationId',
    description: "A location's id: 1 to 64 letters (a-z, A-Z), digits, `-` and `_`. `default` names the built-in location.",
    examples: ['default', 'warehouse-lyon', 'store_12'],
  });
  registry.add(historyLimitSchema, {
    id: 'HistoryLimit',
    description: `How many entries a page of the history has at most: 1 to ${MAX_HISTORY_LIMIT}, ${DEFAULT_HISTORY_LIMIT} when absent.`,
    examples: ['20'],
  });
  registry.add(historyCursorSchema, {
    id: 'HistoryCursor',
    description: 'The `cursor` of the page before, as the service answered it: opaque. One it did not make is refused.',
  });
  registry.add(listLimitSchema, {
    id: 'ListLimit',
    description: `How many SKUs a page of a list has at most: 1 to ${MAX_LIST_LIMIT}, ${DEFAULT_LIST_LIMIT} when absent.`,
    examples: ['20'],
  });
  registry.add(listCursorSchema, {
    id: 'ListCursor',
    description: 'The `cursor` of the page before, as the service answered it: opaque. One it did not make is refused.',
  });
  registry.add(importRowsCursorSchema, {
    id: 'ImportRowsCursor',
    description: "The `cursor` of the page before of the import's rows, as the service answered it: opaque. One it did not make is refused.",
  });
  registry.add(arrivalDateSchema, {
    id: 'ArrivalDate',
    description: '`null` for a batch in stock, or the day a shipment arrives: a real calendar date `YYYY-MM-DD` (2026-02-30 is refused).',
    examples: [null, '2026-06-01'],
  });
  registry.add(batchRowSchema, {
    id: 'ImportBatchRow',
    description:
      'A batch, as `POST /add_batch` takes one: added when no batch has its `ref`; for a batch of the same `sku` at the same ' +
      '`location`, its `qty` set by a count taken now (reason `counted`) and its `eta` changed, each where it differs. ' +
      '`expected_qty`: the batch\'s `qty` as the feed last read it (0 for a batch it adds); the row applies only to that.',
  });
  registry.add(countRowSchema, {
    id: 'ImportCountRow',
    description:
      "A count of a batch's units on hand, as `POST /adjustments` takes one with reason `counted`: applied as of `counted_at`, " +
      'on the `qty` that `expected_qty` names, if any.',
  });
  registry.add(placeCountRowSchema, {
    id: 'ImportPlaceCountRow',
    description:
      "A count of a SKU's units on hand at a `location`, applied as of `counted_at`: spread over the SKU's batches in stock " +
      'there, those with the most units free first (docs/api.md, "A count at a place"), each batch counted as an ' +
      '`ImportCountRow` counts one. A shortfall is taken from the first, then the next; a surplus is added to the first.',
  });
  for (const [name, schema] of Object.entries(requestBodySchemas)) registry.add(schema, { id: name, description: REQUEST_BODY_DESCRIPTIONS[name as RequestBodyName] });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    // What a request may hold: the schemas are strict, so 'input' and 'output' both forbid other fields.
    io: 'input',
    metadata: registry,
    uri: (id) => `#/components/schemas/${id}`,
    override: writeRefinements,
  });
  // Each is a component of the document, not a document of its own.
  return Object.fromEntries(Object.entries(schemas).map(([name, { $schema: _, $id: __, ...schema }]) => [name, schema]));
};


export type ComponentName = 'Identifier' | 'LocationId' | 'ArrivalDate' | 'HistoryLimit' | 'HistoryCursor' | 'ListLimit' | 'ListCursor' | 'ImportRowsCursor' | RequestBodyName | keyof typeof responseSchemas;

export const schemaRef = (name: ComponentName): JsonSchema => ref(name);

/** The component of each schema a path or query parameter is checked with (functions/http/schemas.ts, pathParameterSchemaOf, and each query schema). */
const PARAMETER_COMPONENTS = new Map<object, ComponentName>([
  [identifierSchema, 'Identifier'],
  [locationIdSchema, 'LocationId'],
  [historyLimitSchema, 'HistoryLimit'],
  [historyCursorSchema, 'HistoryCursor'],
  [listLimitSchema, 'ListLimit'],
  [listCursorSchema, 'ListCursor'],
  [importRowsCursorSchema, 'ImportRowsCursor'],
]);

/** A route's query parameters as its handler checks them: an object of optional parameters (functions/http/schemas.ts). */
export type QuerySchema = z.ZodMiniObject<Record<string, z.ZodMiniOptional<z.ZodMiniType>>>;

/** The component that states what each query parameter accepts, as the handler checks it. */
export const queryParameterComponentsOf = (query: QuerySchema): Record<string, ComponentName> =>
  Object.fromEntries(
    Object.entries(query.def.shape).map(([name, optional]) => {
      const component = PARAMETER_COMPONENTS.get(optional.def.innerType);
      if (!component) throw new Error(`The query parameter ${name} is checked by a schema that tools/openapi/components.ts names no component for`);
      return [name, component];
    }),
  );

/** The component that states what the path parameter `name` accepts, as the handlers check it. */
export const pathParameterComponentOf = (name: string): ComponentName => {
  const component = PARAMETER_COMPONENTS.get(pathParameterSchemaOf(name));
  if (!component) throw new Error(`The path parameter ${name} is checked by a schema that tools/openapi/components.ts names no component for`);
  return component;
};

export const componentSchemas = (): Record<string, JsonSchema> => ({ ...requestSchemas(), ...responseSchemas });
