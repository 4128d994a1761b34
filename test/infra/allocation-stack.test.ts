import { readFileSync } from 'node:fs';
import { type Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { linesByBatchIndex, tableKeySchema, timeToLiveAttribute } from '../../functions/store/table';
import { defineAllocationApp } from '../../infra/allocation-app';
import { AllocationStack } from '../../infra/allocation-stack';
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
    expect(functionNamed(name).Properties.LoggingConfig).toEqual({ LogGroup: { Ref: logGroup } });
    expect(template.toJSON().Resources[logGroup].Properties.RetentionInDays).toBeGreaterThan(0);
  });
});

describe.each([{ name: 'Batches' }, { name: 'Allocations' }])('the $name function', ({ name }) => {
  it('is given the table name and source-mapped stack traces, and no DynamoDB endpoint', () => {
    expect(functionNamed(name).Properties.Environment).toEqual({
      Variables: { TABLE_NAME: { Ref: table }, NODE_OPTIONS: '--enable-source-maps' },
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
      Variables: { EVENT_BUS_NAME: { Ref: bus }, NODE_OPTIONS: '--enable-source-maps' },
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
    // The stack has no alarm topic yet: the alarm notifies no one until one is added as its action.
    expect(alarm.Properties.AlarmActions).toBeUndefined();
  });
});

describe('the outputs', () => {
  it('give the API URL, the table name, the event bus and the dead-letter queue of its events', () => {
    const bus = logicalIdOf(stack, 'EventBus');
    expect(template.toJSON().Outputs).toMatchObject({
      ApiUrl: { Value: { 'Fn::Join': ['', expect.arrayContaining(['https://', { Ref: logicalIdOf(stack, 'Api') }])] } },
      TableName: { Value: { Ref: table } },
      EventBusName: { Value: { Ref: bus } },
      EventBusArn: { Value: { 'Fn::GetAtt': [bus, 'Arn'] } },
      EventsDeadLetterQueueUrl: { Value: { Ref: logicalIdOf(stack, 'PublishEventsDeadLetters') } },
    });
  });
});

describe('cdk-nag AwsSolutions checks', () => {
  it.each([{ publicApi: 'false' }, { publicApi: 'true' }])('pass with every finding acknowledged (%o)', (context) => {
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
      { path: `${stack.stackName}/PublishEventsRole`, id: expect.stringMatching(/AwsSolutions-IAM5\[Resource::\*\]$/) },
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
    expect(declaredVariables({ stack, template })).toEqual([
      ['NODE_OPTIONS', 'TABLE_NAME'],
      ['NODE_OPTIONS', 'TABLE_NAME'],
    ]);
    expect(declaredVariables(synthesize({ localDynamoDbEndpoint: 'http://host.docker.internal:8000' }))).toEqual([
      ['DYNAMODB_ENDPOINT', 'NODE_OPTIONS', 'TABLE_NAME'],
      ['DYNAMODB_ENDPOINT', 'NODE_OPTIONS', 'TABLE_NAME'],
    ]);
  });

  it('can set every variable of the env file, as SAM only overrides variables the template declares', () => {
    const forSam = synthesize({ localDynamoDbEndpoint: samEnv.Parameters.DYNAMODB_ENDPOINT });
    const samVariables = Object.keys(samEnv.Parameters).sort();
    expect(declaredVariables(forSam)).toEqual([expect.arrayContaining(samVariables), expect.arrayContaining(samVariables)]);
  });
});
