import { setTimeout as delay } from 'node:timers/promises';
import { PutEventsCommand, type PutEventsCommandOutput, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { DomainEvent } from '../../domain/events';
import { EVENT_SOURCE } from './stream-events';

/**
 * PutEvents takes at most 10 entries a call, and at most 256 KB of them. Ours never come near the
 * size: an event is a handful of fields whose strings are identifiers of at most 128 code points
 * (512 bytes of UTF-8), so an entry is under 3 KB and a call under 30 KB. Calls are cut by count alone.
 */
export const MAX_ENTRIES_PER_CALL = 10;

/** The one call the publisher makes: an EventBridgeClient, or a test's client that fails entries on purpose. */
export interface PutEventsSender {
  send(command: PutEventsCommand, options?: { abortSignal?: AbortSignal }): Promise<PutEventsCommandOutput>;
}

export interface RetryPolicy {
  /** Sends of one event within an invocation, the first included. */
  readonly attempts: number;
  /**
   * The wait before retry n is drawn between 0 and min(maxDelayMs, baseDelayMs * 2^(n-1)) ("full
   * jitter"), so that the consumers of several shards, throttled together, do not retry in step.
   */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/**
 * 4 sends and at most 0.7 s of waiting: enough to ride out a throttled call or an entry's
 * InternalFailure; an outage longer than that is the event source mapping's to retry (infra).
 */
export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 100, maxDelayMs: 2_000 };

/** One stream record's events, in order; `key` names the record in the answer (its sequence number). */
export interface RecordEvents {
  readonly key: string;
  readonly events: readonly DomainEvent[];
}

export interface PublisherOptions {
  readonly sender: PutEventsSender;
  readonly eventBusName: string;
  readonly retry?: RetryPolicy;
  /** Waits between retries; ends early, without failing, when `signal` aborts. Tests pass one that does not wait. */
  readonly wait?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** What became of one call's events. */
export interface Published {
  /** The records not all of whose events are known to be on the bus, each with the last reason one failed for. */
  readonly failedRecords: Map<string, string>;
  /** The events not known to be on the bus. */
  readonly failedEvents: number;
}

/**
 * Puts every record's events on the bus and answers the records not all of whose events are known
 * to be on it, each with the last reason it failed for (an entry's ErrorCode, or the error of a
 * call that failed whole), and how many events those are. Calls carry the events in record order; a retry sends only the entries
 * that failed, so an event that got on the bus is not sent again within the call to `publish`.
 * Once `signal` aborts (the invocation's time is nearly up), no call starts and no wait goes on,
 * and the call in flight is abandoned: its events may or may not be on the bus, and count as failed.
 */
export const eventPublisher = ({ sender, eventBusName, retry = DEFAULT_RETRY, wait = sleep }: PublisherOptions) => {
  const entryOf = ({ name, detail }: DomainEvent): PutEventsRequestEntry => ({
    EventBusName: eventBusName,
    Source: EVENT_SOURCE,
    DetailType: name,
    Detail: JSON.stringify(detail),
    // The change's time, not the call's: the same on every delivery of the event.
    Time: new Date(detail.time),
  });

  /** One round over `entries`, in calls of at most 10; answers the entries that failed, and why. */
  const sendRound = async (entries: readonly Unsent[], signal?: AbortSignal): Promise<Unsent[]> => {
    const failed: Unsent[] = [];
    for (let start = 0; start < entries.length; start += MAX_ENTRIES_PER_CALL) {
      const call = entries.slice(start, start + MAX_ENTRIES_PER_CALL);
      let output: PutEventsCommandOutput;
      try {
        signal?.throwIfAborted();
        output = await sender.send(new PutEventsCommand({ Entries: call.map(({ entry }) => entry) }), { abortSignal: signal });
      } catch (error) {
        // Throttled, unreachable, timed out or out of time: the calls after it would fare no
        // better now, so the rest of the round waits for the next one.
        const reason = reasonOf(error);
        return [...failed, ...entries.slice(start).map((unsent) => ({ ...unsent, reason }))];
      }
      // Results come in the order of the entries; only an entry given an EventId got on the bus.
      call.forEach((unsent, index) => {
        const result = output.Entries?.[index];
        if (!result?.EventId || result.ErrorCode) failed.push({ ...unsent, reason: result?.ErrorCode ?? 'NoResult' });
      });
    }
    return failed;
  };

  return async (records: readonly RecordEvents[], signal?: AbortSignal): Promise<Published> => {
    let unsent: Unsent[] = records.flatMap(({ key, events }) => events.map((event) => ({ key, entry: entryOf(event), reason: '' })));
    for (let attempt = 1; unsent.length > 0; attempt += 1) {
      unsent = await sendRound(unsent, signal);
      if (unsent.length === 0 || attempt >= retry.attempts) break;
      await wait(Math.random() * Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1)), signal);
      if (signal?.aborted) break;
    }
    return { failedRecords: new Map(unsent.map(({ key, reason }) => [key, reason])), failedEvents: unsent.length };
  };
};

export type Publish = ReturnType<typeof eventPublisher>;

interface Unsent {
  readonly key: string;
  readonly entry: PutEventsRequestEntry;
  readonly reason: string;
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  // An abort ends the wait; the caller sees it on the signal.
  delay(ms, undefined, { signal }).catch(() => undefined);

/** The SDK names its errors by their AWS error code (ThrottlingException) or kind (TimeoutError, AbortError). */
const reasonOf = (error: unknown): string => (error instanceof Error ? error.name : String(error));
