import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CfnOutput, Duration, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  HttpApi,
  HttpMethod,
  HttpNoneAuthorizer,
  HttpStage,
  LogGroupLogDestination,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Alarm, ComparisonOperator, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { type BundlingOptions, NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { FUNCTION_TIMEOUT_SECONDS } from '../functions/http/time-budget';
import { routeKeys, splitRouteKey } from '../functions/http/route-keys';
import {
  type TableAccess,
  linesByBatchIndex,
  tableAccess,
  tableKeySchema,
  tableStreamViewType,
  timeToLiveAttribute,
} from '../functions/store/table';
import { productionBundling } from './bundling';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

const attributeType = { S: AttributeType.STRING, N: AttributeType.NUMBER, B: AttributeType.BINARY } as const;

/**
 * The allocations function answers `GET /openapi.json` from a copy of docs/openapi.json beside its
 * bundle, read at the first request that asks (functions/allocations.ts): imported, its 100-odd KB
 * would be in the bundle and parsed at every cold start. The asset's hash covers the output, so a new
 * document is a new deploy of the function.
 */
const withOpenApiDocument: BundlingOptions = {
  ...productionBundling,
  commandHooks: {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) => [`cp "${inputDir}/docs/openapi.json" "${outputDir}/openapi.json"`],
  },
};

// One JSON object per request, with who called (the SigV4 identity) and how it went.
const accessLogFormat = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    requestTime: '$context.requestTime',
    sourceIp: '$context.identity.sourceIp',
    caller: '$context.identity.caller',
    userArn: '$context.identity.userArn',
    routeKey: '$context.routeKey',
    status: '$context.status',
    responseLength: '$context.responseLength',
    responseLatency: '$context.responseLatency',
    integrationLatency: '$context.integrationLatency',
    integrationError: '$context.integrationErrorMessage',
    authorizerError: '$context.authorizer.error',
  }),
);

/**
 * The handler's actions on the table, and only on the items whose partition key starts with one of
 * its prefixes (`dynamodb:LeadingKeys`): the allocation handler cannot take a batch reference. Its
 * writes may name only the attributes it writes (`dynamodb:Attributes`); reads are not restricted by
 * attribute, since a Query would then have to name every attribute it reads. A handler that finds a
 * batch's lines through the index may Query it, and only it, on its own prefixes: the index's
 * partition keys are not the table's.
 */
const grantTableAccess = (
  role: Role,
  tableArn: string,
  { reads, writes, partitionKeyPrefixes, writtenAttributes, indexPartitionKeyPrefixes }: TableAccess,
) => {
  const leadingKeys = (prefixes: readonly string[]) => ({
    'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': prefixes.map((prefix) => `${prefix}*`) },
  });
  const onItsItems = leadingKeys(partitionKeyPrefixes);
  if (reads.length > 0) {
    role.addToPrincipalPolicy(new PolicyStatement({ actions: [...reads], resources: [tableArn], conditions: onItsItems }));
  }
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...writes],
      resources: [tableArn],
      conditions: { ...onItsItems, 'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...writtenAttributes] } },
    }),
  );
  if (indexPartitionKeyPrefixes.length > 0) {
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [`${tableArn}/index/${linesByBatchIndex.name}`],
        conditions: leadingKeys(indexPartitionKeyPrefixes),
      }),
    );
  }
};

/** A route key's method as CDK names it; a key with any other fails the synth, not the deploy. */
const httpMethod = (method: string): HttpMethod => {
  const known = Object.values(HttpMethod).find((value) => value === method);
  if (!known) throw new Error(`Route method ${method} is not an HTTP method API Gateway routes`);
  return known;
};

export interface AllocationStackProps extends StackProps {
  /**
   * Deploy the routes without authorization, for demos: anyone who has the URL can change stock.
   * @default false - every route requires IAM (SigV4) authorization
   */
  readonly publicApi?: boolean;
  /**
   * Steady-state requests per second the API accepts before answering 429.
   * Set with `-c throttlingRateLimit=<n>`.
   * @default 100 - bounds what the service costs and what a runaway client can do; it sits below
   * one SKU's partition ceiling (about 500 allocations/s) and near the per-item conflict ceiling of
   * a single hot SKU (roughly 50-100 allocations/s): see docs/capacity.md, Ceilings
   */
  readonly throttlingRateLimit?: number;
  /**
   * Requests the API accepts in a burst above the steady rate. Set with `-c throttlingBurstLimit=<n>`.
   * @default 200 - absorbs a client's retry storm without letting it last
   */
  readonly throttlingBurstLimit?: number;
  /**
   * Declares DYNAMODB_ENDPOINT on the functions, for `sam local` only: SAM's --env-vars can only
   * override variables the template declares. Never deploy a template synthesized with it.
   * @default - the variable is not declared, and the functions reach DynamoDB itself
   */
  readonly localDynamoDbEndpoint?: string;
}

export class AllocationStack extends Stack {
  constructor(scope: Construct, id: string, props: AllocationStackProps = {}) {
    super(scope, id, props);

    const table = new Table(this, 'Table', {
      partitionKey: {
        name: tableKeySchema.partitionKey.name,
        type: attributeType[tableKeySchema.partitionKey.type],
      },
      sortKey: { name: tableKeySchema.sortKey.name, type: attributeType[tableKeySchema.sortKey.type] },
      // Traffic is spiky and mostly idle: pay per request rather than for provisioned capacity.
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // The table is the system of record: neither `cdk destroy` nor a console click deletes it.
      removalPolicy: RemovalPolicy.RETAIN,
      deletionProtection: true,
      // Each committed change, as it was and as it became, for the domain events (below).
      stream: StreamViewType[tableStreamViewType],
      // Items written only to put an event on the stream go once they have.
      timeToLiveAttribute,
    });
    table.addGlobalSecondaryIndex({
      indexName: linesByBatchIndex.name,
      partitionKey: { name: linesByBatchIndex.partitionKey.name, type: attributeType[linesByBatchIndex.partitionKey.type] },
      sortKey: { name: linesByBatchIndex.sortKey.name, type: attributeType[linesByBatchIndex.sortKey.type] },
      // A shrinking batch moves the lines it reads here: each must come whole, without a second read.
      projectionType: ProjectionType.ALL,
    });

    const environment: Record<string, string> = {
      TABLE_NAME: table.tableName,
      // Stack traces point at the TypeScript source; the price is a slower cold start (the source
      // maps are parsed at load) and a slower `error.stack`, which only errors pay.
      NODE_OPTIONS: '--enable-source-maps',
      ...(props.localDynamoDbEndpoint === undefined ? {} : { DYNAMODB_ENDPOINT: props.localDynamoDbEndpoint }),
    };

    const api = new HttpApi(this, 'Api', {
      apiName: this.stackName,
      description: 'Allocates order lines to batches of stock.',
      // The stage is created below, because only a stage we create takes throttling and access logs.
      createDefaultStage: false,
      defaultAuthorizer: props.publicApi ? new HttpNoneAuthorizer() : new HttpIamAuthorizer(),
    });
    const functions = [
      { name: 'Batches', entry: 'functions/batches.ts', access: tableAccess.batches, routeKeys: routeKeys.batches },
      {
        name: 'Allocations',
        entry: 'functions/allocations.ts',
        access: tableAccess.allocations,
        routeKeys: routeKeys.allocations,
        bundling: withOpenApiDocument,
      },
    ];
    const routes = functions.flatMap(({ name, entry, access, routeKeys: keys, bundling }) => {
      const fn = this.tableHandler(name, entry, { environment, bundling }, table.tableArn, access);
      // One integration per function, shared by its routes; each route gets its own permission to invoke it.
      const integration = new HttpLambdaIntegration(`${name}Integration`, fn);
      return keys.flatMap((routeKey) => {
        const { method, path } = splitRouteKey(routeKey);
        return api.addRoutes({ path, methods: [httpMethod(method)], integration });
      });
    });
    if (props.publicApi) {
      for (const route of routes) {
        Validations.of(route).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason:
            'The operator deployed with -c publicApi=true, for a demo: the route is open on purpose, ' +
            'and stage throttling bounds what an anonymous caller can do.',
        });
      }
    }

    // The record of who called: kept longer than the functions' own logs.
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', {
      retention: RetentionDays.THREE_MONTHS,
      // Logs go with the stack; the table is the one thing `cdk destroy` leaves behind.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const stage = new HttpStage(this, 'DefaultStage', {
      httpApi: api,
      stageName: '$default',
      autoDeploy: true,
      throttle: {
        rateLimit: props.throttlingRateLimit ?? 100,
        burstLimit: props.throttlingBurstLimit ?? 200,
      },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: accessLogFormat,
      },
    });

    new CfnOutput(this, 'ApiUrl', { value: stage.url, description: 'Base URL of the HTTP API.' });
    new CfnOutput(this, 'TableName', { value: table.tableName, description: 'The DynamoDB table.' });

    this.domainEvents(table);
  }

  /**
   * Committed changes become domain events: the table's stream, read by the PublishEvents function,
   * which puts each change's events on the service's own bus. At least once: a record whose events
   * did not all get on the bus is delivered again, with the same event ids (functions/publish-events.ts).
   */
  private domainEvents(table: Table): void {
    const bus = new EventBus(this, 'EventBus', {
      eventBusName: this.stackName,
      description: 'Domain events of the allocation service (source "allocation").',
    });

    // Holds pointers (shard, sequence numbers) to the stream records that failed every retry: not
    // the records themselves, which the stream keeps for 24 hours from their change.
    const failedRecords = new Queue(this, 'PublishEventsDeadLetters', {
      // SQS's own keys: a key of ours would also have to be granted to the function, which sends here.
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // SQS's longest, so that a pointer outlives any weekend; the records it points to do not.
      retentionPeriod: Duration.days(14),
    });
    Validations.of(failedRecords).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "It is the dead-letter queue: the stream consumer's on-failure destination; a queue behind it would have nothing to hold.",
    });

    const { fn, role } = this.ownFunction('PublishEvents', 'functions/publish-events.ts', {
      environment: { EVENT_BUS_NAME: bus.eventBusName, NODE_OPTIONS: '--enable-source-maps' },
      // A batch of 100 records is at most 20 PutEvents calls of tens of milliseconds; the handler
      // gives up on EventBridge a second before this and answers what it could not publish.
      timeout: Duration.seconds(30),
    });
    bus.grantPutEventsTo(role);
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
        onFailure: new SqsDlq(failedRecords),
      }),
    );
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'dynamodb:ListStreams, which the event source mapping needs and which has no resource-level ' +
        "permissions; the stream's own reads (DescribeStream, GetShardIterator, GetRecords) are on its ARN only.",
    });

    // No alarm topic in the stack yet: the alarm shows in CloudWatch and notifies no one until one
    // is added as its action.
    new Alarm(this, 'PublishEventsDeadLettersAlarm', {
      alarmDescription: [
        `Domain events are missing: stream records of the table failed every retry to reach the bus ${bus.eventBusName}.`,
        `First read (do not delete) the message in queue ${failedRecords.queueName}: its DDBStreamBatchInfo names the`,
        "stream, the shard and the first and last sequence numbers. Within 24 hours of the change (the stream's",
        'retention; records reach the queue at most 6 hours old), read those records with GetShardIterator',
        `(AT_SEQUENCE_NUMBER) and GetRecords, and find why in the log of ${fn.functionName} (each failure names`,
        "its record's sequence number and reason). Fix that, then re-drive: invoke the function with",
        '{"Records": [those records]}; the events keep their ids, so consumers drop those they already have.',
        'Then delete the message.',
      ].join(' '),
      metric: failedRecords.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: Stats.MAXIMUM }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      // An empty queue may report nothing at all.
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    new CfnOutput(this, 'EventBusName', { value: bus.eventBusName, description: 'The bus the domain events are put on.' });
    new CfnOutput(this, 'EventBusArn', { value: bus.eventBusArn, description: 'The ARN of the bus the domain events are put on.' });
    new CfnOutput(this, 'EventsDeadLetterQueueUrl', {
      value: failedRecords.queueUrl,
      description: 'Pointers to the stream records whose events could not be published.',
    });
  }

  /** An HTTP handler, allowed only its own items of the table. */
  private tableHandler(
    name: string,
    entry: string,
    { environment, bundling }: { environment: Record<string, string>; bundling?: BundlingOptions },
    tableArn: string,
    access: TableAccess,
  ): NodejsFunction {
    const { fn, role } = this.ownFunction(name, entry, {
      environment,
      bundling,
      // The time budget the handler plans with (functions/http/time-budget.ts), under API Gateway's 30 s.
      timeout: Duration.seconds(FUNCTION_TIMEOUT_SECONDS),
    });
    grantTableAccess(role, tableArn, access);
    return fn;
  }

  /** A function with its own role and log group, so each can be granted only what it uses. */
  private ownFunction(
    name: string,
    entry: string,
    {
      environment,
      timeout,
      bundling = productionBundling,
    }: { environment: Record<string, string>; timeout: Duration; bundling?: BundlingOptions },
  ): { fn: NodejsFunction; role: Role } {
    const logGroup = new LogGroup(this, `${name}Logs`, {
      // Enough to look back on an incident; CloudWatch's default keeps (and bills) them forever.
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // A role of our own: the default one carries the managed AWSLambdaBasicExecutionRole, which
    // may write to any log group in the account.
    const role = new Role(this, `${name}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Runs the ${name} handler.`,
    });
    logGroup.grantWrite(role);

    const fn = new NodejsFunction(this, `${name}Function`, {
      entry: join(repoRoot, entry),
      handler: 'handler',
      // Explicit, so that bundling does not depend on the directory `cdk` or a test runs from.
      projectRoot: repoRoot,
      depsLockFilePath: join(repoRoot, 'package-lock.json'),
      runtime: Runtime.NODEJS_22_X,
      // Graviton: about 20% cheaper per GB-second than x86, and the code has no native modules.
      architecture: Architecture.ARM_64,
      // More memory buys more CPU, which shortens the cold start; warm calls last tens of ms.
      memorySize: 512,
      timeout,
      role,
      logGroup,
      environment,
      // ESM, `module` entry points, minified, the AWS SDK bundled, source maps: each choice and its
      // reason are in ./bundling, shared with `npm run bench` so it measures what deploys.
      bundling,
    });
    Validations.of(fn).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Node.js 22 is the runtime the service is developed and tested on (node@22 in devDependencies); ' +
        'moving to a newer major is a deliberate change made together with the local toolchain.',
    });
    return { fn, role };
  }
}
