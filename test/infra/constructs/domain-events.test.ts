import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { logicalIdOf } from '../cdk-app';
import { functionNamed, statementsOf, synthesize, telemetryNames, writesTo } from '../synthesized';

const synthesized = synthesize();
const { stack, template } = synthesized;
const table = logicalIdOf(stack, 'Table');

describe('the domain events', () => {
  const bus = logicalIdOf(stack.events, 'EventBus');
  const deadLetters = logicalIdOf(stack.events, 'PublishEventsDeadLetters');
  const [mapping, ...otherMappings] = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'));

  it('go on an event bus of their own, named after the stack', () => {
    expect(template.toJSON().Resources[bus]).toMatchObject({ Type: 'AWS::Events::EventBus', Properties: { Name: stack.stackName } });
  });

  it("reach the consumer from the table's stream, oldest record first, in batches of 100, one batch per shard at a time", () => {
    expect(otherMappings).toEqual([]);
    expect(mapping?.Properties).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [table, 'StreamArn'] },
      FunctionName: { Ref: logicalIdOf(stack.events, 'PublishEventsFunction') },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 100,
      ParallelizationFactor: 1,
    });
  });

  it('are retried from the first record the consumer reports, a batch it cannot answer for is split, and the retries are bounded', () => {
    expect(mapping?.Properties).toMatchObject({
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 10,
    });
  });

  it("give up on a record 6 hours old, leaving 18 of the stream's 24 hours to re-drive it from the dead-letter queue", () => {
    expect(mapping?.Properties.MaximumRecordAgeInSeconds).toBe(6 * 60 * 60);
    expect(mapping?.Properties.DestinationConfig).toEqual({ OnFailure: { Destination: { 'Fn::GetAtt': [deadLetters, 'Arn'] } } });
  });

  it("tell the consumer its bus's name, with source-mapped stack traces and nothing of the table", () => {
    expect(functionNamed(synthesized, 'PublishEvents').Properties.Environment).toEqual({
      Variables: { EVENT_BUS_NAME: { Ref: bus }, NODE_OPTIONS: '--enable-source-maps', ...telemetryNames },
    });
  });

  it('that fail keep their pointers 14 days in a dead-letter queue that is encrypted and refuses requests without TLS', () => {
    expect(template.toJSON().Resources[deadLetters].Properties).toEqual({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 60 * 60 });
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: deadLetters }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 'sqs:*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            Resource: { 'Fn::GetAtt': [deadLetters, 'Arn'] },
          }),
        ]),
      },
    });
  });
});

describe("the stream consumer's role", () => {
  it('lets it read the stream, put events on its own bus and send to its dead-letter queue, and nothing else', () => {
    const statements = statementsOf(synthesized, 'PublishEvents');
    const allowed = [
      writesTo(synthesized, 'PublishEventsLogs'),
      { Effect: 'Allow', Action: ['events:PutEvents'], Resource: [{ 'Fn::GetAtt': [logicalIdOf(stack.events, 'EventBus'), 'Arn'] }] },
      {
        Effect: 'Allow',
        Action: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
        Resource: [{ 'Fn::GetAtt': [logicalIdOf(stack.events, 'PublishEventsDeadLetters'), 'Arn'] }],
      },
      // What the event source mapping reads the stream with; ListStreams has no resource-level permissions.
      { Effect: 'Allow', Action: ['dynamodb:ListStreams'], Resource: ['*'] },
      {
        Effect: 'Allow',
        Action: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
        Resource: [{ 'Fn::GetAtt': [table, 'StreamArn'] }],
      },
    ];
    expect(statements).toHaveLength(allowed.length);
    expect(statements).toEqual(expect.arrayContaining(allowed));
  });
});
