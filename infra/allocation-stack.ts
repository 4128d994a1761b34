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
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { FUNCTION_TIMEOUT_SECONDS } from '../functions/http/time-budget';
import { routeKeys, splitRouteKey } from '../functions/http/route-keys';
import { type TableAccess, linesByBatchIndex, tableAccess, tableKeySchema } from '../functions/store/table';
import { productionBundling } from './bundling';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

const attributeType = { S: AttributeType.STRING, N: AttributeType.NUMBER, B: AttributeType.BINARY } as const;

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
      { name: 'Allocations', entry: 'functions/allocations.ts', access: tableAccess.allocations, routeKeys: routeKeys.allocations },
    ];
    const routes = functions.flatMap(({ name, entry, access, routeKeys: keys }) => {
      const fn = this.tableHandler(name, entry, environment, table.tableArn, access);
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
  }

  /** A function with its own role and log group, so each can be granted only what it uses. */
  private tableHandler(
    name: string,
    entry: string,
    environment: Record<string, string>,
    tableArn: string,
    access: TableAccess,
  ): NodejsFunction {
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
    grantTableAccess(role, tableArn, access);

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
      // The time budget the handler plans with (functions/http/time-budget.ts), under API Gateway's 30 s.
      timeout: Duration.seconds(FUNCTION_TIMEOUT_SECONDS),
      role,
      logGroup,
      environment,
      // ESM, `module` entry points, minified, the AWS SDK bundled, source maps: each choice and its
      // reason are in ./bundling, shared with `npm run bench` so it measures what deploys.
      bundling: productionBundling,
    });
    Validations.of(fn).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Node.js 22 is the runtime the service is developed and tested on (node@22 in devDependencies); ' +
        'moving to a newer major is a deliberate change made together with the local toolchain.',
    });
    return fn;
  }
}
