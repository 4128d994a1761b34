import { readFileSync } from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { linesByBatchIndex, skuListsIndex, stockHistoryIndex } from '../../../functions/store/table';
import { AllocationStack } from '../../../infra/allocation-stack';
import { cdkApp, logicalIdOf } from '../cdk-app';
import { type Synthesized, functionNamed, statementsOf, synthesize, tableArnOf, telemetryNames, writesTo } from '../synthesized';

const synthesized = synthesize();
const { stack, template } = synthesized;
const tableArn = tableArnOf(synthesized);

describe.each([
  { name: 'Batches', more: { IMPORT_BUCKET: { Ref: logicalIdOf(stack, 'FeedBucket') } } },
  { name: 'Allocations', more: {} },
])('the $name function', ({ name, more }) => {
  it("is given the table name, the history's retention, source-mapped stack traces, its bucket of feeds if it presigns them, and no DynamoDB endpoint", () => {
    expect(functionNamed(synthesized, name).Properties.Environment).toEqual({
      Variables: { TABLE_NAME: { Ref: logicalIdOf(stack, 'Table') }, HISTORY_RETENTION_DAYS: '90', NODE_OPTIONS: '--enable-source-maps', ...telemetryNames, ...more },
    });
  });
});

describe("the handlers' roles", () => {
  // The items' own attributes (a batch's location among them, which the allocations handler moves between keys too), then those of the notices that exist to put an event on the stream, then a hold's record's, then its units' records'.
  const writtenAttributes = [
    ...['pk', 'sk', 'type', 'ref', 'sku', 'qty', 'available', 'eta', 'heldUnits', 'changedAt', 'pieces', 'spreadId', 'spreadAt', 'piece', 'takenAt', 'givenBack', 'location', 'heldFrom', 'heldTakes'],
    ...['orderid', 'batchref', 'lineBatch', 'allocatedAt', 'movedAt', 'routing', 'split', 'parts', 'shipped', 'cancelledAt'],
    ...['noticeId', 'reason', 'deallocatedAt', 'refusedAt', 'destination', 'expiresAt'],
    ...['holdid', 'lines', 'status', 'heldUntil', 'placedAt', 'extendedAt', 'endedAt', 'activeHoldShard'],
    ...['sourceQty', 'sources'],
  ];
  // A location's own, a transfer's own, a shipment's own and an adjustment's own (and a batch reference's reason and count), which only the batches handler writes.
  const locationAttributes = ['id', 'name', 'priority', 'serves', 'active', 'position', 'handlingDays', 'transitDays', 'revision'];
  const transferAttributes = ['transferid', 'fromLocation', 'toLocation', 'fromBatchref', 'createdAt', 'cancelledAt', 'incomingOf'];
  const shipmentAttributes = ['shipmentid', 'shippedAt'];
  const adjustmentAttributes = ['changeReason', 'countedAt', 'changes', 'adjustmentid', 'delta', 'expectedQty', 'note', 'before', 'after', 'adjustedAt', 'reference', 'at'];
  const historyAttributes = ['actor', 'kind', 'qtyAfter', 'historyOf'];
  const listAttributes = ['listedIn'];
  const importAttributes = ['addedBy', 'importid', 'dryRun', 'validateFirst', 'feed', 'digest', 'file', 'fileRefusal', 'refused', 'rows', 'startedAt', 'total', 'done', 'applied', 'unchanged', 'conflicted', 'stale', 'invalid', 'failed', 'finishedAt', 'outcomes', 'errors', 'claimid', 'recorded', 'counts'];
  const reads = ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'];
  const writes = ['dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'];

  /** Reads (`actions`) of the items under these key prefixes (and `alsoRead`), and writes of only these attributes. */
  const itemGrants = (leadingKeys: string[], attributes: string[], actions = reads, alsoRead: string[] = []) => {
    const onItsItems = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': leadingKeys } };
    const readKeys = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...leadingKeys, ...alsoRead] } };
    return [
      { Effect: 'Allow', Action: actions, Resource: [tableArn], Condition: readKeys },
      {
        Effect: 'Allow',
        Action: writes,
        Resource: [tableArn],
        Condition: { ...onItsItems, 'ForAllValues:StringEquals': { 'dynamodb:Attributes': attributes } },
      },
    ];
  };

  it("let the batches handler touch SKU, piece, batch reference, order, hold, location, transfer, shipment, adjustment and import items, check that a location exists, query the indexes only for a batch's lines, a SKU's history and the lists of SKUs, and put feeds' files", () => {
    expect(statementsOf(synthesized, 'Batches')).toEqual([
      writesTo(synthesized, 'BatchesLogs'),
      ...itemGrants(
        ['SKU#*', 'PIECES#*', 'BATCHREF#*', 'ORDER#*', 'HOLD#*', 'LOCATIONS*', 'TRANSFER#*', 'SHIPMENT#*', 'ADJUSTMENT#*', 'IMPORT#*'],
        [...writtenAttributes, ...locationAttributes, ...transferAttributes, ...shipmentAttributes, ...adjustmentAttributes, ...historyAttributes, ...listAttributes, ...importAttributes],
        ['dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem', 'dynamodb:GetItem', 'dynamodb:Query'],
      ),
      {
        Effect: 'Allow',
        Action: ['dynamodb:Query'],
        Resource: [{ 'Fn::Join': ['', [tableArn, `/index/${linesByBatchIndex.name}`]] }],
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['LINES*'] } },
      },
      {
        Effect: 'Allow',
        Action: ['dynamodb:Query'],
        Resource: [{ 'Fn::Join': ['', [tableArn, `/index/${stockHistoryIndex.name}`]] }],
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['HISTORY#*'] } },
      },
      {
        Effect: 'Allow',
        Action: ['dynamodb:Query'],
        Resource: [{ 'Fn::Join': ['', [tableArn, `/index/${skuListsIndex.name}`]] }],
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['SKUS#*', 'PLACE#*'] } },
      },
      { Effect: 'Allow', Action: ['s3:PutObject'], Resource: [{ 'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalIdOf(stack, 'FeedBucket'), 'Arn'] }, '/imports/*']] }] },
    ]);
  });

  it('let the allocations handler touch only SKU, piece, order and hold items, read the locations it routes by, and not the index', () => {
    expect(statementsOf(synthesized, 'Allocations')).toEqual([
      writesTo(synthesized, 'AllocationsLogs'),
      ...itemGrants(['SKU#*', 'PIECES#*', 'ORDER#*', 'HOLD#*'], writtenAttributes, reads, ['LOCATIONS*']),
    ]);
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
    ['GET /skus/{sku}/history', 'Batches'],
    ['GET /skus', 'Batches'],
    ['GET /locations', 'Batches'],
    ['GET /locations/{id}', 'Batches'],
    ['GET /locations/{id}/stock', 'Batches'],
    ['PUT /locations/{id}', 'Batches'],
    ['POST /transfers', 'Batches'],
    ['GET /transfers/{transferid}', 'Batches'],
    ['DELETE /transfers/{transferid}', 'Batches'],
    ['POST /shipments', 'Batches'],
    ['GET /shipments/{shipmentid}', 'Batches'],
    ['POST /adjustments', 'Batches'],
    ['POST /imports', 'Batches'],
    ['GET /imports/{importid}', 'Batches'],
    ['GET /imports/{importid}/rows', 'Batches'],
    ['POST /allocate', 'Allocations'],
    ['POST /orders', 'Allocations'],
    ['POST /promises', 'Allocations'],
    ['GET /allocations/{orderid}', 'Allocations'],
    ['DELETE /allocations/{orderid}/{sku}', 'Allocations'],
    ['POST /holds', 'Allocations'],
    ['GET /holds/{holdid}', 'Allocations'],
    ['PATCH /holds/{holdid}', 'Allocations'],
    ['DELETE /holds/{holdid}', 'Allocations'],
    ['POST /holds/{holdid}/confirm', 'Allocations'],
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
        IntegrationUri: { 'Fn::GetAtt': [logicalIdOf(stack.api, `${name}Function`), 'Arn'] },
      },
    });
  });

  it.each(['Batches', 'Allocations'])('lets API Gateway invoke the %s function from its own routes only, any stage', (name) => {
    const functionArn = { 'Fn::GetAtt': [logicalIdOf(stack.api, `${name}Function`), 'Arn'] };
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

describe('running under sam local', () => {
  const samEnv: { Parameters: Record<string, string> } = JSON.parse(
    readFileSync(new URL('../../../events/sam-env.json', import.meta.url), 'utf8'),
  );

  /** Of the HTTP handlers, which SAM serves; the stream consumer reads no table, so has no endpoint to point elsewhere. */
  const declaredVariables = (withContext: Synthesized): string[][] =>
    ['Batches', 'Allocations'].map((name) => Object.keys(functionNamed(withContext, name).Properties.Environment.Variables).filter((variable) => variable !== 'IMPORT_BUCKET').sort());

  it('declares DYNAMODB_ENDPOINT only when synthesized with -c localDynamoDbEndpoint', () => {
    const withoutEndpoint = ['HISTORY_RETENTION_DAYS', 'NODE_OPTIONS', ...Object.keys(telemetryNames), 'TABLE_NAME'].sort();
    expect(declaredVariables(synthesized)).toEqual([withoutEndpoint, withoutEndpoint]);
    const withEndpoint = ['DYNAMODB_ENDPOINT', ...withoutEndpoint].sort();
    expect(declaredVariables(synthesize({ localDynamoDbEndpoint: 'http://host.docker.internal:8000' }))).toEqual([withEndpoint, withEndpoint]);
  });

  it('can set every variable of the env file, as SAM only overrides variables the template declares', () => {
    const forSam = synthesize({ localDynamoDbEndpoint: samEnv.Parameters.DYNAMODB_ENDPOINT });
    const samVariables = Object.keys(samEnv.Parameters).sort();
    expect(declaredVariables(forSam)).toEqual([expect.arrayContaining(samVariables), expect.arrayContaining(samVariables)]);
  });
});
