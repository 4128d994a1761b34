import { Duration } from 'aws-cdk-lib';
import { ComparisonOperator, type Metric, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { RaiseAlarm } from './raise-alarm';

/** How old a stream record may be when the consumer gets it before the events count as late. */
export const LATE_EVENTS = Duration.minutes(5);

/** What the monitoring watches of the domain events' delivery (../domain-events.ts). */
export interface WatchedEvents {
  readonly bus: IEventBus;
  readonly deadLetters: Queue;
  readonly consumer: NodejsFunction;
}

/** How old the stream records are when the consumer gets them. */
export const iteratorAgeOf = (consumer: NodejsFunction): Metric =>
  consumer.metric('IteratorAge', { statistic: Stats.MAXIMUM, period: Duration.minutes(5), label: 'iterator age' });

/**
 * The alarms on the domain events: missing (records in the dead-letter queue) and late (the
 * consumer's iterator age). Each description is the operator's first steps, as in ./service-alarms.
 */
export const raiseEventAlarms = (raise: RaiseAlarm, { bus, deadLetters, consumer }: WatchedEvents, dashboardName: string): void => {
  raise('PublishEventsDeadLettersAlarm', {
    alarmDescription: [
      `Domain events are missing: stream records of the table failed every retry to reach the bus ${bus.eventBusName}.`,
      `First read (do not delete) the message in queue ${deadLetters.queueName}: its DDBStreamBatchInfo names the`,
      "stream, the shard and the first and last sequence numbers. Within 24 hours of the change (the stream's",
      'retention; records reach the queue at most 6 hours old), read those records with GetShardIterator',
      `(AT_SEQUENCE_NUMBER) and GetRecords, and find why in the log of ${consumer.functionName} (each failure names`,
      "its record's sequence number and reason). Fix that, then re-drive: invoke the function with",
      '{"Records": [those records]}; the events keep their ids, so consumers drop those they already have.',
      'Then delete the message.',
    ].join(' '),
    metric: deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: Stats.MAXIMUM }),
    threshold: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    // An empty queue may report nothing at all.
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });

  raise('PublishEventsIteratorAgeAlarm', {
    alarmDescription: [
      `Domain events are late: ${consumer.functionName} got stream records more than ${LATE_EVENTS.toMinutes()} minutes after`,
      `their change. First open dashboard ${dashboardName}, "Event delivery": EventsFailed means EventBridge refuses`,
      `them (Logs Insights on ${consumer.logGroup.logGroupName}: filter level = "ERROR"); errors or throttles of the function`,
      'mean it cannot keep up. A record that keeps failing holds its shard for at most 11 invocations; records 6 hours',
      'old go to the dead-letter queue, which has its own alarm.',
    ].join(' '),
    metric: iteratorAgeOf(consumer),
    threshold: LATE_EVENTS.toMilliseconds(),
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    // A stream with no changes invokes nothing, and reports no age.
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
};
