import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  type AttributeValue,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ResourceNotFoundException,
  type Shard,
  type _Record as StreamRecord,
  TrimmedDataAccessException,
} from '@aws-sdk/client-dynamodb-streams';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DomainEvent } from '../domain/events';
import { EVENT_SOURCE, eventsOfRecord } from '../functions/events/stream-events';
import { createDynamoDbClient } from '../functions/store/client';

/** DynamoDB Local holds a record about 50 ms before GetRecords returns it: an event shows within a few hundred. */
const POLL_INTERVAL_MS = 100;
/** GetRecords' most. */
const RECORDS_PER_READ = 1_000;
/** A stream that keeps failing is asked less and less often, down to once per this. */
const MAX_RETRY_DELAY_MS = 5_000;
/** GetRecords answers at once on DynamoDB Local and within a second on AWS: longer is a store that hangs. */
const REQUEST_TIMEOUT_MS = 5_000;

/** Where reading begins: what commits from now on, or every record the stream still holds (24 hours). */
export type StreamStart = 'LATEST' | 'TRIM_HORIZON';

export interface EventStreamOptions {
  readonly tableName: string;
  /** The DynamoDB of the table (DynamoDB Local serves its streams on the same endpoint); DYNAMODB_ENDPOINT when absent. */
  readonly endpoint?: string;
  /** LATEST by default, so that a restart over kept data does not replay its history. */
  readonly from?: StreamStart;
  /** Called with each event in the stream's order, the next once this one has returned (or resolved). */
  readonly onEvent: (event: DomainEvent) => void | Promise<void>;
}

export interface EventStream {
  /** Stops reading; resolves once the reading has ended, after which no event is handed on. */
  stop(): Promise<void>;
}

/** An event as EventBridge delivers it to a consumer: the shape the local server prints. */
export const deliveredEvent = ({ name, detail }: DomainEvent) => ({ source: EVENT_SOURCE, 'detail-type': name, detail });

/**
 * A value as AWS's stream writes it. DynamoDB Local's stream writes an empty map without its type
 * (`{}`, where reading the item answers `{"M": {}}`), at any depth, and the shared conversion
 * rightly refuses a value of no type: a batch's `held` map is empty once its last hold ends, and its
 * next records would be skipped. AWS's stream types it, so the Lambda consumer needs no such repair.
 */
const typedAsOnAws = (value: AttributeValue): AttributeValue => {
  if (value.M) return { M: imageTypedAsOnAws(value.M) };
  if (value.L) return { L: value.L.map(typedAsOnAws) };
  return Object.keys(value).length === 0 ? { M: {} } : value;
};

const imageTypedAsOnAws = (image: Record<string, AttributeValue>): Record<string, AttributeValue> =>
  Object.fromEntries(Object.entries(image).map(([name, value]) => [name, typedAsOnAws(value)]));

/** The record as AWS's stream would give it: see typedAsOnAws. */
export const recordAsOnAws = (record: StreamRecord): StreamRecord => {
  if (!record.dynamodb) return record;
  const { NewImage, OldImage } = record.dynamodb;
  return {
    ...record,
    dynamodb: {
      ...record.dynamodb,
      ...(NewImage ? { NewImage: imageTypedAsOnAws(NewImage) } : {}),
      ...(OldImage ? { OldImage: imageTypedAsOnAws(OldImage) } : {}),
    },
  };
};

const report = (message: string, fields: Record<string, unknown>) => console.error(JSON.stringify({ level: 'error', message, ...fields }));
const describeError = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

/**
 * Follows the table's stream and hands on the events of each record, made by the same code as the
 * Lambda consumer's (functions/events/stream-events.ts). Resolves once it is in place: with LATEST,
 * every change committed after that is handed on. Reads every shard, a child only once its parent is
 * read to its end (so one key's changes stay in order across a shard's rollover, every 4 hours on
 * DynamoDB and DynamoDB Local alike). Each record is first typed as AWS's stream types it
 * (recordAsOnAws). A failing stream is reported once and asked again until it answers; a record
 * whose events cannot be made, or an event `onEvent` throws on, is reported and passed over.
 */
export const followTableEvents = async ({
  tableName,
  endpoint = process.env.DYNAMODB_ENDPOINT,
  from = 'LATEST',
  onEvent,
}: EventStreamOptions): Promise<EventStream> => {
  const tables = createDynamoDbClient(endpoint);
  // The table client's region and credentials, whatever they resolve to (a local endpoint's or AWS's).
  const streams = new DynamoDBStreamsClient({
    ...(endpoint ? { endpoint } : {}),
    region: tables.config.region,
    credentials: tables.config.credentials,
    requestHandler: { connectionTimeout: 1_000, requestTimeout: REQUEST_TIMEOUT_MS, throwOnRequestTimeout: true },
  });
  const abort = new AbortController();
  const { signal } = abort;

  const handOn = async (record: StreamRecord) => {
    let events: DomainEvent[];
    try {
      events = eventsOfRecord(recordAsOnAws(record));
    } catch (error) {
      report('Stream record skipped: its events could not be made', { tableName, eventID: record.eventID, error: describeError(error) });
      return;
    }
    for (const event of events) {
      try {
        await onEvent(event);
      } catch (error) {
        report('Event not handed on', { tableName, event: deliveredEvent(event), error: describeError(error) });
      }
    }
  };

  let shards: ShardReaders;
  try {
    const { Table } = await tables.send(new DescribeTableCommand({ TableName: tableName }));
    if (!Table?.LatestStreamArn) throw new Error(`Table ${tableName} has no stream`);
    shards = new ShardReaders(streams, Table.LatestStreamArn, handOn, signal);
    await shards.position(from);
  } catch (error) {
    streams.destroy();
    throw error;
  } finally {
    tables.destroy();
  }

  const reading = (async () => {
    let failing = false;
    let delayMs = POLL_INTERVAL_MS;
    while (!signal.aborted) {
      try {
        const moreWaiting = await shards.poll();
        if (failing) console.error(JSON.stringify({ level: 'info', message: 'Reading the stream again', tableName }));
        failing = false;
        delayMs = POLL_INTERVAL_MS;
        // Read again at once only behind a full page: under load, a read for every few records would
        // cost DynamoDB Local more than the records themselves.
        if (moreWaiting) continue;
      } catch (error) {
        if (signal.aborted) break;
        if (!failing) report('Cannot read the stream; retrying until it answers', { tableName, error: describeError(error) });
        failing = true;
        delayMs = Math.min(MAX_RETRY_DELAY_MS, delayMs * 2);
      }
      await sleep(delayMs, undefined, { signal }).catch(() => undefined);
    }
  })();

  return {
    stop: async () => {
      abort.abort();
      await reading;
      streams.destroy();
    },
  };
};

interface ShardReader {
  readonly shardId: string;
  readonly parentShardId: string | undefined;
  /** Where to take an iterator when no record of the shard has been read yet. */
  start: StreamStart;
  iterator: string | undefined;
  lastSequenceNumber: string | undefined;
  /** Read to its end: it is closed, or it was closed before reading began from LATEST. */
  done: boolean;
}

/** The shards of one stream and how far each is read. */
class ShardReaders {
  private readonly readers = new Map<string, ShardReader>();
  /** A shard has ended and its children are not known yet. */
  private lookingForChildren = false;

  constructor(
    private readonly streams: DynamoDBStreamsClient,
    private readonly streamArn: string,
    private readonly handOn: (record: StreamRecord) => Promise<void>,
    private readonly signal: AbortSignal,
  ) {}

  /** Takes the stream's shards as they are now, and the iterators of those to read first. */
  async position(from: StreamStart): Promise<void> {
    for (const shard of await this.shards()) {
      const closed = shard.SequenceNumberRange?.EndingSequenceNumber !== undefined;
      this.add(shard, from, from === 'LATEST' && closed);
    }
    // LATEST is the end of a shard when the iterator is taken: take them before anything else is written.
    for (const reader of this.readable()) await this.takeIterator(reader);
  }

  /** Reads what each readable shard has; answers whether a shard answered a full page, so that more may be waiting. */
  async poll(): Promise<boolean> {
    if (this.lookingForChildren) await this.findChildren();
    let moreWaiting = false;
    for (const reader of this.readable()) {
      if (this.signal.aborted) break;
      if ((await this.read(reader)) === RECORDS_PER_READ) moreWaiting = true;
    }
    return moreWaiting;
  }

  private add(shard: Shard, start: StreamStart, done: boolean) {
    const shardId = shard.ShardId ?? '';
    this.readers.set(shardId, { shardId, parentShardId: shard.ParentShardId, start, iterator: undefined, lastSequenceNumber: undefined, done });
  }

  /** Shards not read to their end, whose parent is (or is gone from the stream, or was never read). */
  private readable(): ShardReader[] {
    return [...this.readers.values()].filter(({ done, parentShardId }) => !done && (this.readers.get(parentShardId ?? '')?.done ?? true));
  }

  private async read(reader: ShardReader): Promise<number> {
    let records: StreamRecord[];
    try {
      await this.takeIterator(reader);
      const answer = await this.streams.send(new GetRecordsCommand({ ShardIterator: reader.iterator, Limit: RECORDS_PER_READ }), { abortSignal: this.signal });
      records = answer.Records ?? [];
      reader.iterator = answer.NextShardIterator;
    } catch (error) {
      if (error instanceof ExpiredIteratorException) {
        // An iterator lives 15 minutes, which only a suspended process outlives: the next takes up
        // after the last record read (from LATEST again when there was none, skipping what came meanwhile).
        reader.iterator = undefined;
      } else if (error instanceof TrimmedDataAccessException) {
        report('Stream records expired before they were read', { streamArn: this.streamArn, shardId: reader.shardId });
        reader.start = 'TRIM_HORIZON';
        reader.iterator = undefined;
        reader.lastSequenceNumber = undefined;
      } else if (error instanceof ResourceNotFoundException) {
        // The shard is past the stream's retention: what is left to read is in its children.
        reader.done = true;
        this.lookingForChildren = true;
      } else {
        throw error;
      }
      return 0;
    }
    for (const record of records) {
      if (this.signal.aborted) break;
      await this.handOn(record);
      reader.lastSequenceNumber = record.dynamodb?.SequenceNumber ?? reader.lastSequenceNumber;
    }
    if (!reader.iterator) {
      reader.done = true;
      this.lookingForChildren = true;
    }
    return records.length;
  }

  private async takeIterator(reader: ShardReader): Promise<void> {
    if (reader.iterator) return;
    const { shardId, lastSequenceNumber, start } = reader;
    const position = lastSequenceNumber
      ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' as const, SequenceNumber: lastSequenceNumber }
      : { ShardIteratorType: start };
    const { ShardIterator } = await this.streams.send(
      new GetShardIteratorCommand({ StreamArn: this.streamArn, ShardId: shardId, ...position }),
      { abortSignal: this.signal },
    );
    reader.iterator = ShardIterator;
  }

  /** A shard that appeared after reading began holds only new records: it is read from its start. */
  private async findChildren(): Promise<void> {
    for (const shard of await this.shards()) {
      if (this.readers.has(shard.ShardId ?? '')) continue;
      this.add(shard, 'TRIM_HORIZON', false);
      this.lookingForChildren = false;
    }
  }

  private async shards(): Promise<Shard[]> {
    const shards: Shard[] = [];
    let startAfter: string | undefined;
    do {
      const { StreamDescription } = await this.streams.send(
        new DescribeStreamCommand({ StreamArn: this.streamArn, ExclusiveStartShardId: startAfter }),
        { abortSignal: this.signal },
      );
      shards.push(...(StreamDescription?.Shards ?? []));
      startAfter = StreamDescription?.LastEvaluatedShardId;
    } while (startAfter);
    return shards;
  }
}
