import { readFileSync, readdirSync } from 'node:fs';
import { type Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { linesByBatchIndex, tableKeySchema, timeToLiveAttribute } from '../../functions/store/table';
import { METRICS_NAMESPACE, SERVICE_NAME, metricNames } from '../../functions/telemetry-names';
import { defineAllocationApp } from '../../infra/allocation-app';
import { AllocationStack } from '../../infra/allocation-stack';
import { tableOperations } from '../../infra/constructs/monitoring/metrics';
import { cdkApp, logicalIdOf } from './cdk-app';
import { routeKeys } from '../../functions/http/route-keys';

const synthesize = (context: Record<string, unknown> = {}) => {
  const stack = defineAllocationApp(cdkApp(context));
  return { stack, template: Template.fromStack(stack) };
};

const { stack, template } = synthesize();
const table = logicalIdOf(stack, 'Table');
const tableArn = { 'Fn::GetAtt': [table, 'Arn'] };

const functionNamed = (name: string) => template.toJSON().Resources[logicalIdOf(stack, `${name}Function`)];

/** What Powertools reads to name every function's logs and metrics. */
/** What every function is told for its logs and metrics, by default. */
const telemetryNames = {
  POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
  POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
  POWERTOOLS_LOG_LEVEL: 'INFO',
  POWERTOOLS_LOGGER_SAMPLE_RATE: '0.01',
};

describe('the table', () => {
  it('has the key schema the local server creates', () => {
    const { partitionKey, sortKey } = tableKeySchema;
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: partitionKey.name, KeyType: 'HASH' },
        { AttributeName: sortKey.name, KeyType: 'RANGE' },
      ],
      AttributeDefinitions: Match.arrayWith([
        { AttributeName: partitionKey.name, AttributeType: partitionKey.type },
        { AttributeName: sortKey.name, AttributeType: sortKey.type },
      ]),
    });
  });

  it('has the index a batch finds its lines by, newest first, holding the whole line', () => {
    const { name, partitionKey, sortKey } = linesByBatchIndex;
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      AttributeDefinitions: Match.arrayWith([
        { AttributeName: partitionKey.name, AttributeType: partitionKey.type },
        { AttributeName: sortKey.name, AttributeType: sortKey.type },
      ]),
      GlobalSecondaryIndexes: [
        {
          IndexName: name,
          KeySchema: [
            { AttributeName: partitionKey.name, KeyType: 'HASH' },
            { AttributeName: sortKey.name, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    });
  });

  it('is billed per request, with no capacity provisioned', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      ProvisionedThroughput: Match.absent(),
    });
  });

  it('keeps point-in-time recovery on', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  it('streams every change with the item as it was and as it became', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
    });
  });

  it('lets DynamoDB delete the items whose time to live has passed', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: timeToLiveAttribute, Enabled: true },
    });
  });

  it('survives stack deletion, replacement and a delete call', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: Match.objectLike({ DeletionProtectionEnabled: true }),
    });
  });
});

describe.each([{ name: 'Batches' }, { name: 'Allocations' }, { name: 'PublishEvents' }])('the $name function', ({ name }) => {
  it('runs index.handler on Node.js 22 on arm64', () => {
    expect(functionNamed(name).Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
    });
  });

  it('logs to a log group of its own that expires', () => {
    const logGroup = logicalIdOf(stack, `${name}Logs`);
    expect(functionNamed(name).Properties.LoggingConfig).toMatchObject({ LogGroup: { Ref: logGroup } });
    expect(template.toJSON().Resources[logGroup].Properties.RetentionInDays).toBeGreaterThan(0);
  });

  it("logs JSON, Lambda's filter letting every line through to the Logger's level, and Lambda's with each invocation's report", () => {
    expect(functionNamed(name).Properties.LoggingConfig).toEqual({
      LogGroup: { Ref: logicalIdOf(stack, `${name}Logs`) },
      LogFormat: 'JSON',
      ApplicationLogLevel: 'DEBUG',
      SystemLogLevel: 'INFO',
    });
  });

  it('logs from INFO up, 1% of invocations at DEBUG, under the names the alarms and the dashboard read', () => {
    expect(functionNamed(name).Properties.Environment.Variables).toMatchObject({
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      POWERTOOLS_LOG_LEVEL: 'INFO',
      POWERTOOLS_LOGGER_SAMPLE_RATE: '0.01',
    });
  });

  it('has no X-Ray active tracing', () => {
    expect(functionNamed(name).Properties.TracingConfig).toBeUndefined();
  });
});

describe('the log level', () => {
  const variable = (synthesized: { stack: Stack; template: Template }, name: string) =>
    ['Batches', 'Allocations', 'PublishEvents'].map(
      (fn) => synthesized.template.toJSON().Resources[logicalIdOf(synthesized.stack, `${fn}Function`)].Properties.Environment.Variables[name],
    );

  it.each(['WARN', 'warn'])('of every function is -c logLevel=%s', (logLevel) => {
    expect(variable(synthesize({ logLevel }), 'POWERTOOLS_LOG_LEVEL')).toEqual(['WARN', 'WARN', 'WARN']);
  });

  it("is Powertools' CRITICAL for Lambda's FATAL", () => {
    expect(variable(synthesize({ logLevel: 'FATAL' }), 'POWERTOOLS_LOG_LEVEL')).toEqual(['CRITICAL', 'CRITICAL', 'CRITICAL']);
  });

  it('samples -c debugSampleRate of the invocations at DEBUG', () => {
    expect(variable(synthesize({ debugSampleRate: '0.25' }), 'POWERTOOLS_LOGGER_SAMPLE_RATE')).toEqual(['0.25', '0.25', '0.25']);
  });

  it.each(['1.5', '-0.1', 'often', ''])('refuses -c debugSampleRate=%o, which is not a share', (debugSampleRate) => {
    expect(() => synthesize({ debugSampleRate })).toThrow(/debugSampleRate must be a number from 0 to 1/);
  });

  it.each(['verbose', '', 3, true])('refuses -c logLevel=%o, which Lambda does not know', (logLevel) => {
    expect(() => synthesize({ logLevel })).toThrow(/logLevel must be one of TRACE, DEBUG, INFO, WARN, ERROR, FATAL/);
  });
});

describe.each([{ name: 'Batches' }, { name: 'Allocations' }])('the $name function', ({ name }) => {
  it('is given the table name and source-mapped stack traces, and no DynamoDB endpoint', () => {
    expect(functionNamed(name).Properties.Environment).toEqual({
      Variables: { TABLE_NAME: { Ref: table }, NODE_OPTIONS: '--enable-source-maps', ...telemetryNames },
    });
  });
});

describe("the functions' roles", () => {
  const statementsOf = (roleName: string) => {
    const role = logicalIdOf(stack, `${roleName}Role`);
    const policies = template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: role }] } });
    // Each statement as sorted lists of actions and resources: CDK merges and reorders them freely.
    return Object.values(policies)
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement)
      .map(({ Effect, Action, Resource, ...rest }) => ({
        ...rest,
        Effect,
        Action: [Action].flat().sort(),
        Resource: [Resource].flat(),
      }));
  };
  const writesTo = (logGroupName: string) => ({
    Effect: 'Allow',
    Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
    Resource: [{ 'Fn::GetAtt': [logicalIdOf(stack, logGroupName), 'Arn'] }],
  });

  // The items' own attributes, then those of the notices that exist to put an event on the stream.
  const writtenAttributes = [
    ...['pk', 'sk', 'type', 'ref', 'sku', 'qty', 'available', 'eta', 'changedAt', 'orderid', 'batchref', 'lineBatch', 'allocatedAt', 'movedAt'],
    ...['noticeId', 'reason', 'deallocatedAt', 'refusedAt', 'expiresAt'],
  ];
  const reads = ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'];
  const writes = ['dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'];

  it('let the batches handler touch SKU, batch reference and order items, and query the index only for a batch\'s lines', () => {
    const onItsItems = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['SKU#*', 'BATCHREF#*', 'ORDER#*'] } };
    expect(statementsOf('Batches')).toEqual([
      writesTo('BatchesLogs'),
      { Effect: 'Allow', Action: reads, Resource: [tableArn], Condition: onItsItems },
      {
        Effect: 'Allow',
        Action: writes,
        Resource: [tableArn],
        Condition: { ...onItsItems, 'ForAllValues:StringEquals': { 'dynamodb:Attributes': writtenAttributes } },
      },
      {
        Effect: 'Allow',
        Action: ['dynamodb:Query'],
        Resource: [{ 'Fn::Join': ['', [tableArn, `/index/${linesByBatchIndex.name}`]] }],
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['LINES#*'] } },
      },
    ]);
  });

  it('let the allocations handler touch only SKU and order items, and not the index', () => {
    const onItsItems = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['SKU#*', 'ORDER#*'] } };
    expect(statementsOf('Allocations')).toEqual([
      writesTo('AllocationsLogs'),
      { Effect: 'Allow', Action: reads, Resource: [tableArn], Condition: onItsItems },
      {
        Effect: 'Allow',
        Action: writes,
        Resource: [tableArn],
        Condition: { ...onItsItems, 'ForAllValues:StringEquals': { 'dynamodb:Attributes': writtenAttributes } },
      },
    ]);
  });

  it('let the stream consumer read the stream, put events on its own bus and send to its dead-letter queue, and nothing else', () => {
    const statements = statementsOf('PublishEvents');
    const allowed = [
      writesTo('PublishEventsLogs'),
      { Effect: 'Allow', Action: ['events:PutEvents'], Resource: [{ 'Fn::GetAtt': [logicalIdOf(stack, 'EventBus'), 'Arn'] }] },
      {
        Effect: 'Allow',
        Action: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
        Resource: [{ 'Fn::GetAtt': [logicalIdOf(stack, 'PublishEventsDeadLetters'), 'Arn'] }],
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

  it('are assumable by Lambda only, with no managed or inline policies', () => {
    const roles = Object.keys(template.findResources('AWS::IAM::Role'));
    expect(roles.sort()).toEqual(['Batches', 'Allocations', 'PublishEvents'].map((name) => logicalIdOf(stack, `${name}Role`)).sort());
    for (const role of Object.values(template.findResources('AWS::IAM::Role'))) {
      expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
      ]);
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      expect(role.Properties.Policies).toBeUndefined();
    }
  });

  it('grant no wildcard action', () => {
    const actions = Object.values(template.findResources('AWS::IAM::Policy')).flatMap((policy) =>
      policy.Properties.PolicyDocument.Statement.flatMap((statement: { Action: string | string[] }) => statement.Action),
    );
    expect(actions.filter((action) => action.includes('*'))).toEqual([]);
  });
});

describe('the HTTP API', () => {
  const routesOf = (routesTemplate: Template) =>
    Object.values(routesTemplate.findResources('AWS::ApiGatewayV2::Route')).map(({ Properties }) => ({
      routeKey: Properties.RouteKey,
      authorizationType: Properties.AuthorizationType,
    }));

  const ROUTES = [
    ['POST /add_batch', 'Batches'],
    ['GET /batches/{ref}', 'Batches'],
    ['PATCH /batches/{ref}', 'Batches'],
    ['GET /skus/{sku}/stock', 'Batches'],
    ['POST /allocate', 'Allocations'],
    ['POST /orders', 'Allocations'],
    ['GET /allocations/{orderid}', 'Allocations'],
    ['DELETE /allocations/{orderid}/{sku}', 'Allocations'],
    ['GET /openapi.json', 'Allocations'],
  ] as const;

  it.each(ROUTES)('routes %s to the %s function, through a Lambda proxy with payload 2.0', (routeKey, name) => {
    const [route] = Object.values(template.findResources('AWS::ApiGatewayV2::Route', { Properties: { RouteKey: routeKey } }));
    expect(route?.Properties.Target).toEqual({ 'Fn::Join': ['', ['integrations/', { Ref: expect.any(String) }]] });
    const integration = template.toJSON().Resources[route?.Properties.Target['Fn::Join'][1][1].Ref];
    expect(integration).toMatchObject({
      Type: 'AWS::ApiGatewayV2::Integration',
      Properties: {
        IntegrationType: 'AWS_PROXY',
        PayloadFormatVersion: '2.0',
        IntegrationUri: { 'Fn::GetAtt': [logicalIdOf(stack, `${name}Function`), 'Arn'] },
      },
    });
  });

  it.each(['Batches', 'Allocations'])('lets API Gateway invoke the %s function from its own routes only, any stage', (name) => {
    const functionArn = { 'Fn::GetAtt': [logicalIdOf(stack, `${name}Function`), 'Arn'] };
    const sourcePaths = Object.values(template.findResources('AWS::Lambda::Permission', { Properties: { FunctionName: functionArn } })).map(
      ({ Properties }) => Properties.SourceArn['Fn::Join'][1].at(-1),
    );
    const ownPaths = ROUTES.filter(([, routedTo]) => routedTo === name).map(([routeKey]) => `/*/*${routeKey.split(' ')[1]}`);
    expect(sourcePaths.sort()).toEqual(ownPaths.sort());
  });

  it('requires IAM (SigV4) authorization on every route by default', () => {
    expect(routesOf(template)).toEqual(ROUTES.map(([routeKey]) => ({ routeKey, authorizationType: 'AWS_IAM' })));
  });

  it('opens every route with -c publicApi=true', () => {
    expect(routesOf(synthesize({ publicApi: 'true' }).template)).toEqual(
      ROUTES.map(([routeKey]) => ({ routeKey, authorizationType: 'NONE' })),
    );
  });

  it('refuses a publicApi flag that is neither true nor false', () => {
    expect(() => synthesize({ publicApi: 'yes' })).toThrow(/publicApi must be true or false/);
  });

  it('throttles the stage at 100 requests per second with bursts of 200 unless told otherwise', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 },
    });
    const tuned = new AllocationStack(cdkApp(), 'Tuned', { throttlingRateLimit: 5, throttlingBurstLimit: 10 });
    Template.fromStack(tuned).hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 },
    });
  });

  it.each([
    { throttlingRateLimit: '200', throttlingBurstLimit: '400' },
    { throttlingRateLimit: 200, throttlingBurstLimit: 400 },
  ])('throttles the stage as -c throttlingRateLimit and -c throttlingBurstLimit say (%o)', (context) => {
    synthesize(context).template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 },
    });
  });

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

  it('writes an access log line per request, with the caller, to a log group that expires', () => {
    const [stage] = Object.values(template.findResources('AWS::ApiGatewayV2::Stage'));
    const { DestinationArn, Format } = stage?.Properties.AccessLogSettings;
    const logGroup = DestinationArn['Fn::GetAtt'][0];
    expect(template.toJSON().Resources[logGroup]).toMatchObject({
      Type: 'AWS::Logs::LogGroup',
      Properties: { RetentionInDays: expect.any(Number) },
    });
    expect(JSON.parse(Format)).toMatchObject({
      requestId: '$context.requestId',
      userArn: '$context.identity.userArn',
      routeKey: '$context.routeKey',
      status: '$context.status',
    });
  });
});

describe('the domain events', () => {
  const bus = logicalIdOf(stack, 'EventBus');
  const deadLetters = logicalIdOf(stack, 'PublishEventsDeadLetters');
  const [mapping, ...otherMappings] = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'));

  it('go on an event bus of their own, named after the stack', () => {
    expect(template.toJSON().Resources[bus]).toMatchObject({ Type: 'AWS::Events::EventBus', Properties: { Name: stack.stackName } });
  });

  it("reach the consumer from the table's stream, oldest record first, in batches of 100, one batch per shard at a time", () => {
    expect(otherMappings).toEqual([]);
    expect(mapping?.Properties).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [table, 'StreamArn'] },
      FunctionName: { Ref: logicalIdOf(stack, 'PublishEventsFunction') },
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
    expect(functionNamed('PublishEvents').Properties.Environment).toEqual({
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

  it('that fail raise an alarm on the first message in the dead-letter queue, which says what to do first', () => {
    const alarm = template.toJSON().Resources[logicalIdOf(stack, 'PublishEventsDeadLettersAlarm')];
    expect(alarm.Properties).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [deadLetters, 'QueueName'] } }],
      Statistic: 'Maximum',
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
      EvaluationPeriods: 1,
    });
    const description = alarm.Properties.AlarmDescription['Fn::Join'][1].filter((part: unknown) => typeof part === 'string').join('');
    expect(description).toMatch(/read \(do not delete\) the message/);
    expect(description).toMatch(/the shard and the first and last sequence numbers/);
    expect(description).toMatch(/Within 24 hours/);
    expect(description).toMatch(/re-drive/);
  });
});

describe('the alarm topic', () => {
  const alarmTopic = logicalIdOf(stack, 'AlarmTopic');
  const key = logicalIdOf(stack, 'AlarmTopicKey');

  it('is encrypted with a key of the stack that rotates and that CloudWatch may use, as it cannot use SNS\'s own', () => {
    expect(template.toJSON().Resources[alarmTopic].Properties.KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [key, 'Arn'] });
    const { Properties } = template.toJSON().Resources[key];
    expect(Properties.EnableKeyRotation).toBe(true);
    expect(Properties.KeyPolicy.Statement).toContainEqual({
      Effect: 'Allow',
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      Resource: '*',
    });
  });

  it("refuses publishing without TLS, and lets the account's alarms publish", () => {
    const [policy, ...others] = Object.values(template.findResources('AWS::SNS::TopicPolicy'));
    expect(others).toEqual([]);
    expect(policy?.Properties.Topics).toEqual([{ Ref: alarmTopic }]);
    expect(policy?.Properties.PolicyDocument.Statement).toEqual([
      expect.objectContaining({
        Effect: 'Deny',
        Principal: '*',
        Action: 'sns:Publish',
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
      expect.objectContaining({
        Effect: 'Allow',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: 'sns:Publish',
        Resource: { Ref: alarmTopic },
        Condition: {
          ArnLike: {
            'aws:SourceArn': {
              'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':cloudwatch:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':alarm:*']],
            },
          },
        },
      }),
    ]);
  });

  it('is an output, for subscribing to it', () => {
    expect(template.toJSON().Outputs.AlarmTopicArn.Value).toEqual({ Ref: alarmTopic });
  });

  it('e-mails the address of -c alarmEmail, and no one without it', () => {
    expect(template.findResources('AWS::SNS::Subscription')).toEqual({});
    const subscribed = synthesize({ alarmEmail: 'ops@example.com' });
    expect(Object.values(subscribed.template.findResources('AWS::SNS::Subscription')).map(({ Properties }) => Properties)).toEqual([
      { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: logicalIdOf(subscribed.stack, 'AlarmTopic') } },
    ]);
  });

  it.each(['ops', 'ops@example', '@example.com', 'ops @example.com', '', true])(
    'refuses -c alarmEmail=%o, which is not an e-mail address',
    (alarmEmail) => {
      expect(() => synthesize({ alarmEmail })).toThrow(/alarmEmail must be an e-mail address/);
    },
  );
});

interface AlarmResource {
  Properties: {
    AlarmDescription: string | { 'Fn::Join': [string, unknown[]] };
    AlarmActions?: unknown[];
    OKActions?: unknown[];
    Threshold: number;
    ComparisonOperator: string;
    EvaluationPeriods: number;
    DatapointsToAlarm?: number;
    TreatMissingData?: string;
    Namespace?: string;
    MetricName?: string;
    Dimensions?: { Name: string; Value: unknown }[];
    Statistic?: string;
    ExtendedStatistic?: string;
    Period?: number;
    Metrics?: {
      Id: string;
      Expression?: string;
      ReturnData?: boolean;
      MetricStat?: {
        Metric: { Namespace: string; MetricName: string; Dimensions: { Name: string; Value: unknown }[] };
        Stat: string;
        Period: number;
      };
    }[];
  };
}

/** A metric an alarm reads, whether the alarm reads one metric or a math expression over several. */
interface ReadMetric {
  id?: string;
  namespace?: string;
  metricName?: string;
  dimensions: Record<string, unknown>;
  stat?: string;
  period?: number;
}

const dimensionsOf = (dimensions: { Name: string; Value: unknown }[] = []) => Object.fromEntries(dimensions.map(({ Name, Value }) => [Name, Value]));

const metricsRead = ({ Properties: p }: AlarmResource): ReadMetric[] =>
  p.Metrics === undefined
    ? [
        {
          namespace: p.Namespace,
          metricName: p.MetricName,
          dimensions: dimensionsOf(p.Dimensions),
          stat: p.Statistic ?? p.ExtendedStatistic,
          period: p.Period,
        },
      ]
    : p.Metrics.flatMap(({ Id, MetricStat }) =>
        MetricStat === undefined
          ? []
          : [
              {
                id: Id,
                namespace: MetricStat.Metric.Namespace,
                metricName: MetricStat.Metric.MetricName,
                dimensions: dimensionsOf(MetricStat.Metric.Dimensions),
                stat: MetricStat.Stat,
                period: MetricStat.Period,
              },
            ],
      );

/** The expression an alarm compares with its threshold, when it reads a math expression. */
const expressionOf = ({ Properties: p }: AlarmResource) => p.Metrics?.find(({ ReturnData }) => ReturnData !== false)?.Expression;

/** A description's text, each name that CloudFormation fills in at deploy written as `name`. */
const textOf = (description: AlarmResource['Properties']['AlarmDescription'], name = '<name>') =>
  typeof description === 'string' ? description : description['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : name)).join('');

const allRouteKeys = [...routeKeys.batches, ...routeKeys.allocations];
const functionNames = ['Batches', 'Allocations', 'PublishEvents'];

describe('the alarms', () => {
  const alarms = (from: Template = template) => Object.values(from.findResources('AWS::CloudWatch::Alarm')) as AlarmResource[];
  const alarmNamed = (id: string) => template.toJSON().Resources[logicalIdOf(stack, id)] as AlarmResource;
  const latencyAlarmOf = (routeKey: string, from: Template = template) => {
    const [method, path] = routeKey.split(' ');
    return alarms(from).filter((alarm) =>
      metricsRead(alarm).some(({ metricName, dimensions }) => metricName === 'Latency' && dimensions.Method === method && dimensions.Resource === path),
    );
  };
  const api = { Ref: logicalIdOf(stack, 'Api') };

  it('are one on the 5xx rate, one per route, two per function, two on the table and two on the events', () => {
    expect(alarms()).toHaveLength(1 + allRouteKeys.length + 2 * functionNames.length + 2 + 2);
  });

  it('notify the alarm topic when they go off and when they are over', () => {
    const topic = [{ Ref: logicalIdOf(stack, 'AlarmTopic') }];
    for (const { Properties } of alarms()) {
      expect(Properties.AlarmActions).toEqual(topic);
      expect(Properties.OKActions).toEqual(topic);
    }
  });

  it("each say what happened and what to do first, within CloudWatch's 1,024 characters however long the generated names", () => {
    for (const { Properties } of alarms()) {
      const text = textOf(Properties.AlarmDescription, 'x'.repeat(80));
      expect(text).toMatch(/\bFirst\b/);
      expect(text.length).toBeGreaterThan(200);
      expect(text.length).toBeLessThanOrEqual(1024);
    }
  });

  it('go off when more than 1% of the requests of 5 minutes answer 5xx, and at least 5 do', () => {
    const alarm = alarmNamed('ApiServerErrorsAlarm');
    expect(expressionOf(alarm)).toBe('IF(errors >= 5, 100 * errors / requests, 0)');
    const stage = { ApiId: api, Stage: '$default' };
    expect(metricsRead(alarm)).toEqual([
      { id: 'errors', namespace: 'AWS/ApiGateway', metricName: '5xx', dimensions: stage, stat: 'Sum', period: 300 },
      { id: 'requests', namespace: 'AWS/ApiGateway', metricName: 'Count', dimensions: stage, stat: 'Sum', period: 300 },
    ]);
    expect(alarm.Properties).toMatchObject({
      Threshold: 1,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it.each(allRouteKeys)('go off when %s answers its slowest 1% in more than 1,000 ms for 10 minutes', (routeKey) => {
    const [method, path] = routeKey.split(' ');
    const [alarm, ...others] = latencyAlarmOf(routeKey);
    expect(others).toEqual([]);
    expect(metricsRead(alarm as AlarmResource)).toEqual([
      expect.objectContaining({
        namespace: 'AWS/ApiGateway',
        dimensions: { ApiId: api, Stage: '$default', Method: method, Resource: path },
        stat: 'p99',
        period: 300,
      }),
    ]);
    expect(alarm?.Properties).toMatchObject({
      Threshold: 1000,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 2,
      TreatMissingData: 'notBreaching',
    });
    expect(textOf(alarm?.Properties.AlarmDescription ?? '')).toContain(`filter route = "${routeKey}"`);
  });

  it('hold every route to the p99 of -c p99LatencyMs', () => {
    const tuned = synthesize({ p99LatencyMs: '750' }).template;
    expect(allRouteKeys.map((routeKey) => latencyAlarmOf(routeKey, tuned)[0]?.Properties.Threshold)).toEqual(allRouteKeys.map(() => 750));
  });

  it("read each route's own metrics, which the stage publishes only when told to", () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', { DefaultRouteSettings: Match.objectLike({ DetailedMetricsEnabled: true }) });
  });

  it.each(functionNames)('go off at the first error, and at the first throttle, of the %s function in 5 minutes', (name) => {
    const fn = { Ref: logicalIdOf(stack, `${name}Function`) };
    for (const [id, metricName] of [
      [`${name}ErrorsAlarm`, 'Errors'],
      [`${name}ThrottlesAlarm`, 'Throttles'],
    ] as const) {
      const alarm = alarmNamed(id);
      expect(metricsRead(alarm)).toEqual([{ namespace: 'AWS/Lambda', metricName, dimensions: { FunctionName: fn }, stat: 'Sum', period: 300 }]);
      expect(alarm.Properties).toMatchObject({
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
    }
  });

  it.each([
    ['TableThrottlesAlarm', 'ThrottledRequests'],
    ['TableSystemErrorsAlarm', 'SystemErrors'],
  ])('%s goes off at %s of any operation in 2 of 3 five-minute periods, an operation with none counting 0', (id, metricName) => {
    const alarm = alarmNamed(id);
    const read = metricsRead(alarm);
    expect(read.map(({ dimensions }) => dimensions.Operation)).toEqual([...tableOperations]);
    for (const metric of read) {
      expect(metric).toMatchObject({ namespace: 'AWS/DynamoDB', metricName, dimensions: { TableName: { Ref: table } }, stat: 'Sum', period: 300 });
    }
    expect(expressionOf(alarm)).toBe(read.map(({ id: metricId }) => `FILL(${metricId}, 0)`).join(' + '));
    // CloudWatch refuses an alarm that reads more than 10 metrics.
    expect(read.length).toBeLessThanOrEqual(10);
    expect(alarm.Properties).toMatchObject({ Threshold: 1, EvaluationPeriods: 3, DatapointsToAlarm: 2, TreatMissingData: 'notBreaching' });
  });

  it('on the table count every DynamoDB operation the adapter sends', () => {
    // The Document client's commands, by the operation DynamoDB names them by in its metrics.
    const operationOf: Record<string, string> = {
      Get: 'GetItem',
      Put: 'PutItem',
      Update: 'UpdateItem',
      Delete: 'DeleteItem',
      BatchGet: 'BatchGetItem',
      BatchWrite: 'BatchWriteItem',
      TransactGet: 'TransactGetItems',
      TransactWrite: 'TransactWriteItems',
      Query: 'Query',
      Scan: 'Scan',
    };
    const storeDirectory = new URL('../../functions/store/', import.meta.url);
    const sent = readdirSync(storeDirectory)
      .filter((file) => file.endsWith('.ts'))
      .flatMap((file) => [...readFileSync(new URL(file, storeDirectory), 'utf8').matchAll(/new (\w+?)(?:Item)?Command\(/g)])
      .map(([, command = '']) => operationOf[command] ?? command);
    expect(sent.length).toBeGreaterThan(0);
    expect([...tableOperations]).toEqual(expect.arrayContaining([...new Set(sent)]));
  });

  it('go off when the stream consumer gets records more than 5 minutes after their change', () => {
    const alarm = alarmNamed('PublishEventsIteratorAgeAlarm');
    expect(metricsRead(alarm)).toEqual([
      expect.objectContaining({
        namespace: 'AWS/Lambda',
        metricName: 'IteratorAge',
        dimensions: { FunctionName: { Ref: logicalIdOf(stack, 'PublishEventsFunction') } },
        stat: 'Maximum',
        period: 300,
      }),
    ]);
    expect(alarm.Properties).toMatchObject({ Threshold: 5 * 60 * 1000, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'notBreaching' });
  });
});

describe('the dashboard', () => {
  const [dashboardId, dashboard] = Object.entries(template.findResources('AWS::CloudWatch::Dashboard'))[0] ?? [];
  /** The body, each value CloudFormation fills in at deploy written as `<token>`. */
  const body: { start: string; widgets: { type: string; properties: { title?: string; alarms?: unknown[]; metrics?: unknown[][]; query?: string } }[] } =
    JSON.parse(
      dashboard?.Properties.DashboardBody['Fn::Join'][1].map((part: unknown) => (typeof part === 'string' ? part : '<token>')).join('') ?? '{}',
    );
  /** Each graphed metric as its namespace, name, dimensions and options; an expression as its options alone. */
  const graphed = body.widgets.flatMap(({ properties }) =>
    (properties.metrics ?? []).map((line) => {
      const options = (typeof line.at(-1) === 'object' ? line.at(-1) : {}) as { stat?: string; expression?: string; label?: string };
      const [namespace, metricName, ...dimensions] = line.filter((part): part is string => typeof part === 'string');
      const dimensionsMap = Object.fromEntries(dimensions.flatMap((name, index) => (index % 2 === 0 ? [[name, dimensions[index + 1]]] : [])));
      return { namespace, metricName, dimensions: dimensionsMap, ...options };
    }),
  );
  const titles = body.widgets.map(({ properties }) => properties.title);

  it('is named after the stack, and its address is an output', () => {
    expect(dashboard?.Properties.DashboardName).toBe(stack.stackName);
    expect(template.toJSON().Outputs.DashboardUrl.Value['Fn::Join'][1]).toContainEqual({ Ref: dashboardId });
  });

  it('shows the state of every alarm first', () => {
    const [first] = body.widgets;
    expect(first?.type).toBe('alarm');
    expect(first?.properties.alarms).toHaveLength(Object.keys(template.findResources('AWS::CloudWatch::Alarm')).length);
  });

  it("shows the stage's requests, 4xx and 5xx", () => {
    const stage = { ApiId: '<token>', Stage: '$default' };
    for (const metricName of ['Count', '4xx', '5xx']) {
      expect(graphed).toContainEqual(expect.objectContaining({ namespace: 'AWS/ApiGateway', metricName, dimensions: stage, stat: 'Sum' }));
    }
  });

  it.each(allRouteKeys)('shows the p50 and p99 latency of %s', (routeKey) => {
    const [method, path] = routeKey.split(' ');
    for (const stat of ['p50', 'p99']) {
      expect(graphed).toContainEqual(
        expect.objectContaining({
          namespace: 'AWS/ApiGateway',
          metricName: 'Latency',
          dimensions: { ApiId: '<token>', Method: method, Resource: path, Stage: '$default' },
          stat,
          label: routeKey,
        }),
      );
    }
  });

  it.each(['POST /allocate', 'POST /orders'])('shows the lines %s allocated against those it refused, by the names the handler emits', (operation) => {
    const names = [metricNames.linesAllocated, metricNames.outOfStock, metricNames.invalidSku];
    for (const metricName of operation === 'POST /orders' ? [...names, metricNames.ordersAllocated] : names) {
      expect(graphed).toContainEqual(
        expect.objectContaining({ namespace: METRICS_NAMESPACE, metricName, dimensions: { operation, service: SERVICE_NAME }, stat: 'Sum' }),
      );
    }
  });

  it('shows every metric the handlers emit', () => {
    const shown = (metricName: string) =>
      graphed.some(
        (metric) =>
          (metric.namespace === METRICS_NAMESPACE && metric.metricName === metricName) ||
          metric.expression?.includes(`{${METRICS_NAMESPACE},`) && metric.expression.includes(`MetricName="${metricName}"`),
      );
    expect(Object.values(metricNames).filter((metricName) => !shown(metricName))).toEqual([]);
  });

  it('shows the 503s by cause and route, and the events published against those that failed', () => {
    const byCauseAndRoute = `SEARCH('{${METRICS_NAMESPACE},service,cause,operation} MetricName="${metricNames.unavailable}"', 'Sum', 300)`;
    expect(graphed).toContainEqual(expect.objectContaining({ expression: byCauseAndRoute }));
    for (const metricName of [metricNames.eventsPublished, metricNames.eventsFailed]) {
      expect(graphed).toContainEqual(
        expect.objectContaining({ namespace: METRICS_NAMESPACE, metricName, dimensions: { operation: 'PublishEvents', service: SERVICE_NAME } }),
      );
    }
  });

  it("shows the table's consumed capacity, its index's included, its throttles and its system errors", () => {
    for (const [metricName, dimensions] of [
      ['ConsumedReadCapacityUnits', { TableName: '<token>' }],
      ['ConsumedWriteCapacityUnits', { TableName: '<token>' }],
      ['ConsumedWriteCapacityUnits', { TableName: '<token>', GlobalSecondaryIndexName: linesByBatchIndex.name }],
    ] as const) {
      expect(graphed).toContainEqual(expect.objectContaining({ namespace: 'AWS/DynamoDB', metricName, dimensions, stat: 'Sum' }));
    }
    for (const metricName of ['ThrottledRequests', 'SystemErrors']) {
      expect(graphed.filter((metric) => metric.metricName === metricName).map(({ dimensions }) => dimensions.Operation)).toEqual(
        expect.arrayContaining([...tableOperations]),
      );
    }
  });

  it("shows the stream consumer's iterator age and the dead-letter queue's depth", () => {
    expect(graphed).toContainEqual(expect.objectContaining({ namespace: 'AWS/Lambda', metricName: 'IteratorAge', stat: 'Maximum' }));
    expect(graphed).toContainEqual(expect.objectContaining({ namespace: 'AWS/SQS', metricName: 'ApproximateNumberOfMessagesVisible' }));
  });

  it.each(functionNames)('shows the errors, throttles, duration and concurrent executions of the %s function', (name) => {
    for (const metricName of ['Errors', 'Throttles', 'Duration', 'ConcurrentExecutions']) {
      expect(graphed).toContainEqual(
        expect.objectContaining({ namespace: 'AWS/Lambda', metricName, label: expect.stringContaining(name) }),
      );
    }
  });

  it("counts cold starts from Lambda's reports in the functions' logs", () => {
    const [logWidget] = body.widgets.filter(({ type }) => type === 'log');
    expect(logWidget?.properties.query).toContain('filter type = "platform.report" and ispresent(record.metrics.initDurationMs)');
    expect(logWidget?.properties.query?.match(/SOURCE '<token>'/g)).toHaveLength(functionNames.length);
  });

  it('has a title on every widget', () => {
    expect(titles.every((title) => typeof title === 'string' && title.length > 0)).toBe(true);
  });
});

describe('the outputs', () => {
  it('give the API URL, the table name, the event bus, the dead-letter queue of its events, the alarm topic and the dashboard', () => {
    const bus = logicalIdOf(stack, 'EventBus');
    expect(template.toJSON().Outputs).toMatchObject({
      ApiUrl: { Value: { 'Fn::Join': ['', expect.arrayContaining(['https://', { Ref: logicalIdOf(stack, 'Api') }])] } },
      TableName: { Value: { Ref: table } },
      EventBusName: { Value: { Ref: bus } },
      EventBusArn: { Value: { 'Fn::GetAtt': [bus, 'Arn'] } },
      EventsDeadLetterQueueUrl: { Value: { Ref: logicalIdOf(stack, 'PublishEventsDeadLetters') } },
      AlarmTopicArn: { Value: { Ref: logicalIdOf(stack, 'AlarmTopic') } },
      DashboardUrl: { Value: { 'Fn::Join': ['', expect.arrayContaining([{ Ref: logicalIdOf(stack, 'Dashboard') }])] } },
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

  it("acknowledge a wildcard resource only on the stream consumer's role, where ListStreams needs it", () => {
    const wildcardAcknowledgements = stack.node.findAll().flatMap((construct) =>
      construct.node.metadata
        .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((entry) => Object.keys(entry.data))
        .filter((id) => id.includes('AwsSolutions-IAM5'))
        .map((id) => ({ path: construct.node.path, id })),
    );
    expect(wildcardAcknowledgements).toEqual([
      { path: `${stack.stackName}/DomainEvents/PublishEventsRole`, id: expect.stringMatching(/AwsSolutions-IAM5\[Resource::\*\]$/) },
    ]);
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

describe('running under sam local', () => {
  const samEnv: { Parameters: Record<string, string> } = JSON.parse(
    readFileSync(new URL('../../events/sam-env.json', import.meta.url), 'utf8'),
  );

  /** Of the HTTP handlers, which SAM serves; the stream consumer reads no table, so has no endpoint to point elsewhere. */
  const declaredVariables = (synthesized: { stack: Stack; template: Template }): string[][] =>
    ['Batches', 'Allocations'].map((name) =>
      Object.keys(synthesized.template.toJSON().Resources[logicalIdOf(synthesized.stack, `${name}Function`)].Properties.Environment.Variables).sort(),
    );

  it('declares DYNAMODB_ENDPOINT only when synthesized with -c localDynamoDbEndpoint', () => {
    const withoutEndpoint = ['NODE_OPTIONS', ...Object.keys(telemetryNames), 'TABLE_NAME'].sort();
    expect(declaredVariables({ stack, template })).toEqual([withoutEndpoint, withoutEndpoint]);
    const withEndpoint = ['DYNAMODB_ENDPOINT', ...withoutEndpoint].sort();
    expect(declaredVariables(synthesize({ localDynamoDbEndpoint: 'http://host.docker.internal:8000' }))).toEqual([withEndpoint, withEndpoint]);
  });

  it('can set every variable of the env file, as SAM only overrides variables the template declares', () => {
    const forSam = synthesize({ localDynamoDbEndpoint: samEnv.Parameters.DYNAMODB_ENDPOINT });
    const samVariables = Object.keys(samEnv.Parameters).sort();
    expect(declaredVariables(forSam)).toEqual([expect.arrayContaining(samVariables), expect.arrayContaining(samVariables)]);
  });
});
