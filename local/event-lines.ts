import { mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DomainEvent } from '../domain/events';
import { deliveredEvent } from './event-stream';

/*
 * How `npm start` prints each domain event: whole, as one JSON line shaped as EventBridge delivers
 * it, for a pipe, a file or `--json-logs`; in a terminal, one short line that names the event and
 * its ids, beside the one-line requests; with `--no-events`, not at all (a file of them is still
 * appended).
 */

export type EventOutput = 'json' | 'line' | 'none';

/** The longest short line: a terminal's width, about. */
const MAX_LINE_CHARACTERS = 120;

/** What every event's detail has, which tells one event from another but not what happened: left out of its short line. */
const ENVELOPE_FIELDS = new Set(['id', 'version', 'time']);

/** An event in a few words: its name, then its detail's top-level words and numbers (ids, qty), in order, but its id, version and time. */
export const eventLine = (event: DomainEvent): string => {
  const fields = Object.entries(event.detail as Record<string, unknown>).flatMap(([name, value]) =>
    !ENVELOPE_FIELDS.has(name) && (typeof value === 'string' || typeof value === 'number') ? [`${name}=${value}`] : [],
  );
  const line = `event ${event.name} ${fields.join(' ')}`.trimEnd();
  return line.length > MAX_LINE_CHARACTERS ? `${line.slice(0, MAX_LINE_CHARACTERS - 1)}…` : line;
};

/**
 * Prints each event as `output` says, and appends its JSON line to `eventsFile` when there is one.
 * The file is opened at once, so that a path that cannot be written stops the start rather than
 * every event: `refuse` names the failure.
 */
export const eventPrinter = (output: EventOutput, eventsFile: string | undefined, refuse: (message: string) => Error): ((event: DomainEvent) => void) => {
  let file: number | undefined;
  if (eventsFile !== undefined) {
    try {
      mkdirSync(dirname(eventsFile), { recursive: true });
      file = openSync(eventsFile, 'a');
    } catch (error) {
      throw refuse(`Cannot append events to ${eventsFile}: ${error instanceof Error ? error.message : error}`);
    }
  }
  return (event) => {
    const json = `${JSON.stringify(deliveredEvent(event))}\n`;
    if (output === 'json') process.stdout.write(json);
    else if (output === 'line') process.stdout.write(`${eventLine(event)}\n`);
    if (file !== undefined) writeSync(file, json);
  };
};
