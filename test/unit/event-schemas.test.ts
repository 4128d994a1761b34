import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { type EventDetail, type EventName, eventNames, eventSchemas } from '../../domain/events';
import { EVENT_SCHEMAS_DIR, SCHEMA_FILE_SUFFIX, eventSchemaFileName, eventSchemaFiles } from '../../tools/event-schemas';

const REGENERATE = 'run `npm run events:schemas` and commit docs/events/';

const committedSchemaFiles = () => readdirSync(EVENT_SCHEMAS_DIR).filter((file) => file.endsWith(SCHEMA_FILE_SUFFIX));

const committedText = (fileName: string) => readFileSync(join(EVENT_SCHEMAS_DIR, fileName), 'utf8');

describe('the event schemas in docs/events', () => {
  it('the committed event schemas equal a fresh generation', () => {
    for (const { fileName, text } of eventSchemaFiles()) {
      expect(committedSchemaFiles(), `docs/events/${fileName} is missing: ${REGENERATE}`).toContain(fileName);
      expect(committedText(fileName), `docs/events/${fileName} is out of date: ${REGENERATE}`).toBe(text);
    }
  });

  it('holds exactly one schema file per event, none for an event that is gone', () => {
    expect(committedSchemaFiles().sort(), `docs/events/ lacks a schema or holds a stale one: ${REGENERATE}`).toEqual(
      eventNames.map(eventSchemaFileName).sort(),
    );
  });
});

const envelope = { id: 'evt-1', version: 1, time: '2026-03-01T09:30:00.000Z' } as const;
const hold = { holdid: 'cart-1', expires_at: '2026-03-01T09:45:00.000Z', lines: [{ sku: 'LAMP', qty: 3, batchref: 'b1', location: 'default' }] };

const transfer = { transferid: 't1', sku: 'LAMP', qty: 3, from: 'default', to: 'lyon', eta: '2026-04-01', from_batchref: 'b1', ref: 't1' };

const validDetails: { [Name in EventName]: EventDetail<Name> } = {
  Allocated: { ...envelope, orderid: 'o1', sku: 'LAMP', qty: 3, batchref: 'b1', location: 'lyon' },
  Deallocated: { ...envelope, orderid: 'o1', sku: 'LAMP', qty: 3, batchref: 'b1', location: 'lyon', reason: 'reallocated' },
  BatchAdded: { ...envelope, ref: 'b1', sku: 'LAMP', qty: 20, eta: '2026-04-01', location: 'default' },
  BatchChanged: { ...envelope, ref: 'b1', sku: 'LAMP', qty: 0, eta: null, location: 'lyon' },
  OutOfStock: { ...envelope, sku: 'LAMP', orderid: 'o2', qty: 5, destination: { country: 'FR', position: { lat: 48.86, lng: 2.35 } }, location: 'nantes' },
  HoldPlaced: { ...envelope, ...hold },
  HoldExtended: { ...envelope, ...hold },
  HoldReleased: { ...envelope, ...hold, reason: 'expired' },
  HoldConfirmed: { ...envelope, ...hold, orderid: 'o1' },
  LocationChanged: { ...envelope, location: 'lyon', name: 'Lyon', priority: 10, serves: ['FR', 'BE'], active: true, position: { lat: 45.76, lng: 4.84 } },
  TransferCreated: { ...envelope, ...transfer },
  TransferCancelled: { ...envelope, ...transfer },
  ImportCompleted: { ...envelope, importid: 'feed-1', status: 'completed', dry_run: false, total: 3, done: 3, applied: 2, unchanged: 0, conflicted: 1, stale: 0, invalid: 0, failed: 0 },
  Shipped: { ...envelope, shipmentid: 'parcel-1', orderid: 'o1', location: 'lyon', lines: [{ sku: 'LAMP', qty: 3, parts: [{ batchref: 'b1', qty: 3 }] }] },
};

type Detail = Record<string, unknown>;

/** The detail with these fields changed where it names a SKU and its qty: in itself, or in its (first) line for a hold's. */
const withLineFields = (valid: Detail, fields: Detail): Detail =>
  Array.isArray(valid.lines) ? { ...valid, lines: [{ ...(valid.lines[0] as Detail), ...fields }] } : { ...valid, ...fields };

const invalidDetails = (name: EventName): Array<[string, Detail]> => {
  const valid: Detail = validDetails[name];
  const { id: _id, ...withoutId } = valid;
  const cases: Array<[string, Detail]> = [
    ['without its id', withoutId],
    ['of version 2', { ...valid, version: 2 }],
    ['with a time on 30 February', { ...valid, time: '2026-02-30T09:30:00Z' }],
    ['with a time not in UTC', { ...valid, time: '2026-03-01T10:30:00+01:00' }],
  ];
  if ('sku' in valid || 'lines' in valid) {
    cases.push(
      ['with an empty sku', withLineFields(valid, { sku: '' })],
      ['with a fractional qty', withLineFields(valid, { qty: 1.5 })],
      [name === 'BatchChanged' ? 'with qty -1' : 'with qty 0', withLineFields(valid, { qty: name === 'BatchChanged' ? -1 : 0 })],
    );
  }
  if ('location' in valid) cases.push(['with an empty location', { ...valid, location: '' }]);
  if (name !== 'OutOfStock' && name !== 'LocationChanged' && name !== 'TransferCreated' && name !== 'TransferCancelled' && name !== 'ImportCompleted') {
    // A hold's lines each name their batch's location; a shipment names the one place it left from.
    cases.push(['without the location of its batch', 'lines' in valid && name !== 'Shipped' ? withLineFields(valid, { location: undefined }) : { ...valid, location: undefined }]);
  }
  if ('destination' in valid) {
    cases.push(
      ['with a destination without its country', { ...valid, destination: { position: { lat: 1, lng: 2 } } }],
      ['with a destination whose position has no lng', { ...valid, destination: { country: 'FR', position: { lat: 1 } } }],
    );
  }
  if ('importid' in valid) {
    cases.push(['with a status still running', { ...valid, status: 'running' }], ['with a count below 0', { ...valid, applied: -1 }]);
  }
  if ('serves' in valid) {
    cases.push(
      ['serving nowhere', { ...valid, serves: [] }],
      ['with a negative priority', { ...valid, priority: -1 }],
      ['with active a word', { ...valid, active: 'yes' }],
      ['with a position without lng', { ...valid, position: { lat: 1 } }],
    );
  }
  if ('eta' in valid) cases.push(['with an eta on 30 February', { ...valid, eta: '2026-02-30' }]);
  if ('reason' in valid) cases.push(['with an unknown reason', { ...valid, reason: 'lost' }]);
  if ('lines' in valid) cases.push(['with no lines', { ...valid, lines: [] }]);
  if ('holdid' in valid) {
    cases.push(
      ['with a line without its batchref', withLineFields(valid, { batchref: undefined })],
      ['with an expires_at not in UTC', { ...valid, expires_at: '2026-03-01T10:45:00+01:00' }],
    );
  }
  if ('shipmentid' in valid) {
    cases.push(
      ['with a line that left no batch', withLineFields(valid, { parts: [] })],
      ['with a part without its batchref', withLineFields(valid, { parts: [{ qty: 3 }] })],
    );
  }
  return cases;
};

describe.each(eventNames)('the schema of %s', (name) => {
  let validate: ValidateFunction;
  // The committed file, not a fresh generation: it is the one consumers validate with. Read in a
  // hook so that a missing file fails these tests, not the collection of the whole file.
  beforeAll(() => {
    validate = addFormats(new Ajv2020({ allErrors: true })).compile(JSON.parse(committedText(eventSchemaFileName(name))));
  });
  const zodAccepts = (detail: Detail) => eventSchemas[name].safeParse(detail).success;

  it('accepts a valid detail', () => {
    expect(validate(validDetails[name]), JSON.stringify(validate.errors)).toBe(true);
  });

  if (name === 'OutOfStock') {
    it('accepts a refusal whose request named neither a destination nor a location, as every refusal was before', () => {
      const { destination: _, location: __, ...everywhere } = validDetails.OutOfStock;
      expect(validate(everywhere), JSON.stringify(validate.errors)).toBe(true);
      expect(zodAccepts(everywhere)).toBe(true);
    });
  }

  it('accepts a detail with a field added later, as the version rule allows', () => {
    const detail = { ...validDetails[name], addedLater: 'x' };
    expect(validate(detail), JSON.stringify(validate.errors)).toBe(true);
    expect(zodAccepts(detail)).toBe(true);
  });

  it.each(invalidDetails(name))('rejects a detail %s, as the zod definition does', (_, detail) => {
    expect(validate(detail)).toBe(false);
    expect(zodAccepts(detail)).toBe(false);
  });
});
