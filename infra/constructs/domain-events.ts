import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { Part } from './part';
import { type LogSettings, serviceFunction } from './service-function';

export interface DomainEventsProps {
  /** The table whose stream carries every committed change. */
  readonly table: Table;
  readonly logSettings: LogSettings;
}

/**
 * Committed changes become domain events: the table's stream, read by the PublishEvents function,
 * which puts each change's events on the service's own bus. At least once: a record whose events
 * did not all get on the bus is delivered again, with the same event ids (functions/publish-events.ts).
 * The alarms on its delivery are with the rest of the monitoring.
 */
export class DomainEvents extends Part {
  readonly bus: EventBus;
  /** Pointers to the stream records whose events could not be published. */
  readonly deadLetters: Queue;
  /** The stream consumer. */
  readonly consumer: NodejsFunction;

  constructor(scope: Construct, id: string, { table, logSettings }: DomainEventsProps) {
    super(scope, id);
    this.bus = new EventBus(this, 'EventBus', {
      eventBusName: Stack.of(this).stackName,
      description: 'Domain events of the allocation service (source "allocation").',
    });

    // Holds pointers (shard, sequence numbers) to the stream records that failed every retry: not
    // the records themselves, which the stream keeps for 24 hours from their change.
    this.deadLetters = new Queue(this, 'PublishEventsDeadLetters', {
      // SQS's own keys: a key of ours would also have to be granted to the function, which sends here.
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // SQS's longest, so that a pointer outlives any weekend; the records it points to do not.
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.deadLetters).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "It is the dead-letter queue: the stream consumer's on-failure destination; a queue behind it would have nothing to hold.",
    });

    const { fn, role } = serviceFunction(this, 'PublishEvents', {
      entry: 'functions/publish-events.ts',
      environment: { EVENT_BUS_NAME: this.bus.eventBusName, NODE_OPTIONS: '--enable-source-maps' },
      // A batch of 100 records is at most 20 PutEvents calls of tens of milliseconds; the handler
      // gives up on EventBridge a second before this and answers what it could not publish.
      timeout: Duration.seconds(30),
      logSettings,
    });
    this.consumer = fn;
    this.bus.grantPutEventsTo(role);
    fn.addEventSource(
      new DynamoEventSource(table, {
        // From the oldest record the stream holds: a consumer deployed after the table, or
        // re-created, misses none of the last 24 hours' changes.
        startingPosition: StartingPosition.TRIM_HORIZON,
        // 100 records make at most 200 events, 20 calls: well inside the timeout. A record that
        // fails brings back only the records after it in its batch, so no more than 99 repeats.
        batchSize: 100,
        // One batch per shard at a time, so an item's changes are published in the order they
        // were made (EventBridge itself promises no order to the bus's consumers).
        parallelizationFactor: 1,
        // The handler answers each record's failure itself; a batch it could not answer for (a
        // crash, the timeout) is split in two and retried, which isolates a record that breaks it
        // and costs no retry.
        reportBatchItemFailures: true,
        bisectBatchOnError: true,
        // Each invocation already sends a failing event 4 times (DEFAULT_RETRY in functions/events/publisher.ts).
        // A record that fails every time (one the mapping cannot read) holds its shard for 11
        // invocations, not for hours; an outage of EventBridge longer than that sends its records
        // to the dead-letter queue, to be re-driven.
        retryAttempts: 10,
        // Also bounds how long a shard can be held when invocations cannot even start (throttled):
        // a record older than 6 hours goes to the dead-letter queue, leaving at least 18 of the
        // stream's 24 hours of retention to read it back from the pointer and re-drive it.
        maxRecordAge: Duration.hours(6),
        onFailure: new SqsDlq(this.deadLetters),
      }),
    );
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'dynamodb:ListStreams, which the event source mapping needs and which has no resource-level ' +
        "permissions; the stream's own reads (DescribeStream, GetShardIterator, GetRecords) are on its ARN only.",
    });
  }
}
