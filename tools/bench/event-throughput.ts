/**
 * How many events a second the stream consumer's own code turns out of stream records: the handler
 * (functions/publish-events.ts) with its mapping and its calls of ten, over the records DynamoDB
 * Local wrote for the unit tests (test/unit/fixtures), copied with ids of their own, in batches of
 * 100 as the event source mapping delivers them, against an EventBridge that accepts every entry at
 * once. On AWS, PutEvents' round trips (tens of ms per call of ten) bound it long before this does.
 */
import { readFileSync } from 'node:fs';
import type { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { createPublishEventsHandler } from '../../functions/publish-events';

export interface EventThroughput {
  readonly records: number;
  readonly events: number;
  readonly eventsPerSecond: number;
  readonly recordsPerSecond: number;
}

const RECORDED = 'test/unit/fixtures/stream-records.json';
/** The stack's event source mapping's batch size (infra/constructs/domain-events.ts). */
const RECORDS_PER_INVOCATION = 100;
const WARM_UP_COPIES = 50;

const copiesOfRecorded = (copies: number): DynamoDBRecord[] => {
  const { Records } = JSON.parse(readFileSync(RECORDED, 'utf8')) as DynamoDBStreamEvent;
  return Array.from({ length: copies }, (_, copy) =>
    Records.map((record) => ({
      ...record,
      eventID: `${record.eventID}-${copy}`,
      dynamodb: { ...record.dynamodb, SequenceNumber: `${copy}${record.dynamodb?.SequenceNumber ?? ''}` },
    })),
  ).flat();
};

export const measureEventThroughput = async (copies: number): Promise<EventThroughput> => {
  const events = { count: 0 };
  /** An EventBridge that accepts every entry at once, and counts them. */
  const acceptingEveryEntry = {
    send: async (command: PutEventsCommand) => {
      const entries = command.input.Entries ?? [];
      events.count += entries.length;
      return { $metadata: {}, FailedEntryCount: 0, Entries: entries.map((_, index) => ({ EventId: String(index) })) };
    },
  };
  const handler = createPublishEventsHandler({ eventBusName: 'bench', sender: acceptingEveryEntry });
  const context = { awsRequestId: 'bench' } as Context;
  const consume = async (records: DynamoDBRecord[]) => {
    for (let start = 0; start < records.length; start += RECORDS_PER_INVOCATION) {
      const { batchItemFailures } = await handler({ Records: records.slice(start, start + RECORDS_PER_INVOCATION) }, context);
      if (batchItemFailures.length > 0) throw new Error(`The consumer reported ${batchItemFailures.length} failures`);
    }
  };
  // The handler's log entry and metrics of each batch would flood the bench's output; they go
  // nowhere here. Powertools writes them to stdout through a console of its own, built at load.
  const write = process.stdout.write;
  process.stdout.write = () => true;
  try {
    await consume(copiesOfRecorded(WARM_UP_COPIES));
    const records = copiesOfRecorded(copies);
    events.count = 0;
    const startedAt = performance.now();
    await consume(records);
    const seconds = (performance.now() - startedAt) / 1000;
    return { records: records.length, events: events.count, eventsPerSecond: events.count / seconds, recordsPerSecond: records.length / seconds };
  } finally {
    process.stdout.write = write;
  }
};
