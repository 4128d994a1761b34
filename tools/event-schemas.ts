/**
 * `npm run events:schemas`: writes the JSON Schema of every domain event's `detail` to docs/events/,
 * generated from the zod definitions in domain/events.ts, and removes the file of an event that is
 * gone. test/unit/event-schemas.test.ts fails when the committed files differ from a fresh generation.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runsWithoutOptions } from './command-line';
import * as z from 'zod/mini';
import { EVENT_VERSION, type EventName, eventNames, eventSchemas } from '../domain/events';
import { EVENT_SOURCE } from '../functions/events/stream-events';

export const EVENT_SCHEMAS_DIR = join(import.meta.dirname, '../docs/events');
export const SCHEMA_FILE_SUFFIX = '.schema.json';

export const eventSchemaFileName = (name: EventName) => `${name}.v${EVENT_VERSION}${SCHEMA_FILE_SUFFIX}`;

const CONSUMER_RULES =
  'Delivered at least once: drop a detail whose id was seen before. ' +
  'Fields may be added without a new version: ignore those you do not know.';

export interface EventSchemaFile {
  readonly fileName: string;
  readonly text: string;
}

export const eventSchemaFiles = (): EventSchemaFile[] =>
  eventNames.map((name) => {
    const { $schema, description, ...detail } = z.toJSONSchema(eventSchemas[name], {
      target: 'draft-2020-12',
      // A consumer accepts what the definition parses, and zod's parse ignores unknown fields; the
      // default ('output') would emit additionalProperties: false and make an added field a break.
      io: 'input',
    });
    const document = {
      $schema,
      // A URN: stable and absolute without naming a host.
      $id: `urn:allocation:${name}:v${EVENT_VERSION}`,
      title: name,
      description:
        `${description} Published on EventBridge with source "${EVENT_SOURCE}" and detail-type "${name}"; ` +
        `this is the schema of its detail. ${CONSUMER_RULES}`,
      ...detail,
    };
    return { fileName: eventSchemaFileName(name), text: `${JSON.stringify(document, null, 2)}\n` };
  });

const writeEventSchemas = () => {
  const files = eventSchemaFiles();
  mkdirSync(EVENT_SCHEMAS_DIR, { recursive: true });
  const current = new Set(files.map(({ fileName }) => fileName));
  for (const stale of readdirSync(EVENT_SCHEMAS_DIR).filter((f) => f.endsWith(SCHEMA_FILE_SUFFIX) && !current.has(f))) {
    rmSync(join(EVENT_SCHEMAS_DIR, stale));
    console.log(`removed docs/events/${stale}`);
  }
  for (const { fileName, text } of files) writeFileSync(join(EVENT_SCHEMAS_DIR, fileName), text);
  console.log(`wrote ${files.length} event schemas to docs/events/`);
};

// Not import.meta.main: Node 20, which package.json's engines still allows, leaves it undefined.
if (process.argv[1] === fileURLToPath(import.meta.url) && runsWithoutOptions('usage: npm run events:schemas\n\nWrites docs/events/, a JSON Schema for each event; takes no option.')) writeEventSchemas();
