import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import middy from '@middy/core';
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { type PublisherOptions, type RecordEvents, eventPublisher } from './events/publisher';
import { eventsOfRecord } from './events/stream-events';
import { addCount, logger, publishOperationCounts, takeColdStart } from './telemetry';
import { type MetricName, PUBLISH_EVENTS_OPERATION, metricNames } from './telemetry-names';

/**
 * The table's stream consumer: each committed change becomes its domain events on the service's
 * bus. Delivery is at least once. A record any of whose events did not get on the bus is answered
 * by its sequence number (ReportBatchItemFailures), and Lambda sends the batch again from the
 * lowest one answered: that record and every record after it in the batch, those already published
 * too. Each event's id comes from its record (stream-events.ts), so a redelivered event carries the
 * same id and a consumer drops the copy. A record still failing after the event source mapping's
 * retries goes, as a pointer to its shard and sequence numbers, to the dead-letter queue (infra).
 */

/**
 * Leaves time, before Lambda would stop the invocation, to give up on the call in flight and answer
 * the records not yet published: answered, only they and the records after them come back; cut
 * off, the whole batch would, and would be split in two (bisectBatchOnError).
 */
const TIME_TO_ANSWER_MS = 1_000;

/**
 * EventBridge in the same region: it connects in milliseconds and a PutEvents of ten small entries
 * answers in tens of them, so 1 s to connect and 2 s per call only cut off a service that is not
 * answering. One attempt per call: the publisher retries calls and entries under one budget, which
 * the SDK's own retries would multiply.
 */
const createEventBridgeClient = () =>
  new EventBridgeClient({
    maxAttempts: 1,
    requestHandler: {
      connectionTimeout: 1_000,
      requestTimeout: 2_000,
      // As in store/client.ts: without it a call past requestTimeout is only logged, and waited for.
      throwOnRequestTimeout: true,
    },
  });

export interface PublishEventsOptions extends Omit<PublisherOptions, 'eventBusName'> {
  /** EVENT_BUS_NAME; when unset every invocation fails, rather than publish to the account's default bus. */
  readonly eventBusName: string | undefined;
}

const deadlineOf = (context: Context): AbortSignal | undefined =>
  typeof context.getRemainingTimeInMillis === 'function'
    ? AbortSignal.timeout(Math.max(0, context.getRemainingTimeInMillis() - TIME_TO_ANSWER_MS))
    : undefined;

const describe = (error: unknown): string => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

export const createPublishEventsHandler = ({ eventBusName, ...publisherOptions }: PublishEventsOptions) => {
  const publish = eventBusName ? eventPublisher({ ...publisherOptions, eventBusName }) : undefined;
  return middy<DynamoDBStreamEvent, DynamoDBBatchResponse, Error, Context>().handler(async ({ Records: records }, context) => {
    // Each invocation draws anew whether it logs at DEBUG (POWERTOOLS_LOGGER_SAMPLE_RATE).
    logger.refreshSampleRateCalculation();
    if (!publish) throw new Error('EVENT_BUS_NAME is not set');
    // Lambda treats an empty item identifier as the failure of the whole batch: the safe answer
    // for a record that, against the stream's contract, came without a sequence number.
    const sequenceNumberOf = (record: (typeof records)[number]) => record.dynamodb?.SequenceNumber ?? '';

    const failures = new Map<string, string>();
    const mapped: RecordEvents[] = [];
    for (const record of records) {
      try {
        mapped.push({ key: sequenceNumberOf(record), events: eventsOfRecord(record) });
      } catch (error) {
        // The same record fails the same way on every delivery: after the retries it reaches the
        // dead-letter queue, with the message logged here.
        failures.set(sequenceNumberOf(record), describe(error));
      }
    }
    const { failedRecords, failedEvents } = await publish(mapped, deadlineOf(context));
    for (const [sequenceNumber, reason] of failedRecords) failures.set(sequenceNumber, reason);

    const events = mapped.reduce((count, { events }) => count + events.length, 0);
    const entry = {
      message: 'Stream records',
      cold_start: takeColdStart(),
      function_request_id: context.awsRequestId,
      records: records.length,
      events,
      failed: [...failures].map(([sequenceNumber, reason]) => ({ sequenceNumber, reason })),
    };
    if (failures.size > 0) logger.error(entry);
    else logger.info(entry);
    // Events, not records: a record whose events could not be read has none to count (its entry
    // above names it, and its retries end in the dead-letter queue, whose alarm watches for it).
    const counts = new Map<MetricName, number>();
    addCount(counts, metricNames.eventsPublished, events - failedEvents);
    addCount(counts, metricNames.eventsFailed, failedEvents);
    publishOperationCounts(PUBLISH_EVENTS_OPERATION, counts);
    return {
      batchItemFailures: records
        .map(sequenceNumberOf)
        .filter((sequenceNumber) => failures.has(sequenceNumber))
        .map((sequenceNumber) => ({ itemIdentifier: sequenceNumber })),
    };
  });
};

/** Built once per Lambda instance, at module scope, so warm invocations reuse its connections. */
export const handler = createPublishEventsHandler({ sender: createEventBridgeClient(), eventBusName: process.env.EVENT_BUS_NAME });
