import { Validations, type Stack } from 'aws-cdk-lib';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { routeKeys } from '../../functions/http/route-keys';
import { defineAllocationApp } from '../../infra/allocation-app';
import { cdkApp, logicalIdOf } from './cdk-app';
import { synthesize } from './synthesized';

const { stack, template } = synthesize();

describe('the logical ids', () => {
  const logicalIdsOf = (type: string) => Object.keys(template.findResources(type)).sort();

  /*
   * These are the resources deployed stacks hold data or state in. CloudFormation replaces a
   * resource whose logical id changes: it creates a new one and deletes the old, so a changed id
   * would leave the table behind (it is retained) and start an empty one, fail on the bus's fixed
   * name, drop the dead-letter pointers still to re-drive, the logs, the e-mail subscriptions their
   * owners confirmed and the key the topic's messages are encrypted with, and start a new event
   * source mapping at the stream's oldest record, publishing 24 hours of events again. These ids
   * must never change; the constructs the stack is composed of are left out of them
   * (AllocationStack.allocateLogicalId).
   */
  it('of the resources that hold data or state are those of every deployed stack, so an upgrade replaces none', () => {
    expect({
      table: logicalIdsOf('AWS::DynamoDB::Table'),
      bus: logicalIdsOf('AWS::Events::EventBus'),
      deadLetters: logicalIdsOf('AWS::SQS::Queue'),
      logGroups: logicalIdsOf('AWS::Logs::LogGroup'),
      streamReader: logicalIdsOf('AWS::Lambda::EventSourceMapping'),
      alarmTopicKey: logicalIdsOf('AWS::KMS::Key'),
      alarmTopic: logicalIdsOf('AWS::SNS::Topic'),
    }).toEqual({
      table: ['TableCD117FA1'],
      bus: ['EventBus7B8748AA'],
      deadLetters: ['PublishEventsDeadLettersF69DE6E8'],
      logGroups: ['AllocationsLogs61E22636', 'ApiAccessLogsE9DF007D', 'BatchesLogs970CE1D6', 'ImportStateMachineLogs08042D1E', 'ImportWorkerLogs2AE0A4D0', 'PublishEventsLogsC3662FA3', 'SweepHoldsLogs35156B38'],
      streamReader: ['PublishEventsFunctionDynamoDBEventSourceAllocationServiceTable605470774D46729C'],
      alarmTopicKey: ['AlarmTopicKey57B0D3A7'],
      alarmTopic: ['AlarmTopicD01E77F9'],
    });
  });

  it('of no resource name the constructs the stack is composed of', () => {
    const partIds = [stack.api, stack.events, stack.sweeper, stack.monitoring].map((part) => part.node.id);
    expect(partIds).toEqual(['HttpApi', 'DomainEvents', 'HoldSweeper', 'Monitoring']);
    const named = Object.keys(template.toJSON().Resources).filter((logicalId) => partIds.some((id) => logicalId.startsWith(id)));
    expect(named).toEqual([]);
  });
});

describe('the settings from the context', () => {
  it.each([
    ['throttlingRateLimit', '0'],
    ['throttlingRateLimit', '-5'],
    ['throttlingRateLimit', '1.5'],
    ['throttlingRateLimit', 'fast'],
    ['throttlingRateLimit', ''],
    ['throttlingBurstLimit', 0],
    ['throttlingBurstLimit', 2.5],
    ['throttlingBurstLimit', true],
    ['p99LatencyMs', '0'],
    ['p99LatencyMs', 'fast'],
  ])('refuses %s=%o, which is not a positive integer', (key, value) => {
    expect(() => synthesize({ [key]: value })).toThrow(new RegExp(`${key} must be a positive integer`));
  });
});

describe('the outputs', () => {
  it('give the API URL, the table name, the event bus, the dead-letter queue of its events, the alarm topic and the dashboard', () => {
    const bus = logicalIdOf(stack.events, 'EventBus');
    expect(template.toJSON().Outputs).toMatchObject({
      ApiUrl: { Value: { 'Fn::Join': ['', expect.arrayContaining(['https://', { Ref: logicalIdOf(stack.api, 'Api') }])] } },
      TableName: { Value: { Ref: logicalIdOf(stack, 'Table') } },
      EventBusName: { Value: { Ref: bus } },
      EventBusArn: { Value: { 'Fn::GetAtt': [bus, 'Arn'] } },
      EventsDeadLetterQueueUrl: { Value: { Ref: logicalIdOf(stack.events, 'PublishEventsDeadLetters') } },
      AlarmTopicArn: { Value: { Ref: logicalIdOf(stack.monitoring, 'AlarmTopic') } },
      DashboardUrl: { Value: { 'Fn::Join': ['', expect.arrayContaining([{ Ref: logicalIdOf(stack.monitoring, 'Dashboard') }])] } },
    });
  });
});

describe('cdk-nag AwsSolutions checks', () => {
  it.each([{ publicApi: 'false' }, { publicApi: 'true' }, { alarmEmail: 'ops@example.com' }])('pass with every finding acknowledged (%o)', (context) => {
    const app = cdkApp(context);
    defineAllocationApp(app);
    expect(() => app.synth()).not.toThrow();
  });

  it('fail the synth on a finding nobody acknowledged', () => {
    const app = cdkApp();
    const checked = defineAllocationApp(app);
    new Role(checked, 'Careless', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('AdministratorAccess')],
    });
    expect(() => app.synth()).toThrow(/AwsSolutions-IAM4/);
  });

  it("acknowledge a wildcard resource only where nothing narrower can be named: the stream consumer's ListStreams, the feeds' keys, the import engine's grants, and the callers' routes' path parameters", () => {
    const wildcardAcknowledgements = stack.node.findAll().flatMap((construct) =>
      construct.node.metadata
        .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((entry) => Object.keys(entry.data))
        .filter((id) => id.includes('AwsSolutions-IAM5'))
        .map((id) => ({ path: construct.node.path, id })),
    );
    const onCallers = wildcardAcknowledgements.filter(({ path }) => path.startsWith(`${stack.callers.node.path}/`));
    expect(wildcardAcknowledgements.filter((acknowledgement) => !onCallers.includes(acknowledgement))).toEqual([
      { path: `${stack.api.node.path}/BatchesRole`, id: expect.stringMatching(/AwsSolutions-IAM5\[Resource::<FeedBucket\w+\.Arn>\/imports\/\*\]$/) },
      { path: `${stack.events.node.path}/PublishEventsRole`, id: expect.stringMatching(/AwsSolutions-IAM5\[Resource::\*\]$/) },
      ...[/Resource::\*\]$/, /Resource::<ImportWorkerFunction\w+\.Arn>:\*\]$/, /:execution:.*:\*\]$/, /:execution:.*\/\*:\*\]$/, /Resource::arn:<AWS::Partition>:s3:::<FeedBucket\w+>\/\*\]$/].map((id) => ({
        path: stack.imports.stateMachine.node.path,
        id: expect.stringMatching(id),
      })),
    ]);
    // Each names one route's ARN whose only wildcards are its path parameters' segments.
    expect(onCallers.length).toBeGreaterThan(0);
    for (const { id } of onCallers) expect(id).toMatch(/AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<\w+>\/\$default\/[A-Z]+(\/[a-z_]+|\/\*)+\]$/);
  });

  it('acknowledge an open route only when the operator asked for it', () => {
    const acknowledged = (checkedStack: Stack) =>
      checkedStack.node
        .findAll()
        .flatMap((construct) => construct.node.metadata)
        .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((entry) => Object.keys(entry.data));
    expect(acknowledged(stack).filter((id) => id.includes('APIG4'))).toEqual([]);
    expect(acknowledged(synthesize({ publicApi: true }).stack).filter((id) => id.includes('APIG4'))).toHaveLength(
      routeKeys.batches.length + routeKeys.allocations.length,
    );
  });
});
