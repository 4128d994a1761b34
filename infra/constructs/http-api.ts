import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpMethod, HttpNoneAuthorizer, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { MIN_HISTORY_RETENTION_DAYS } from '../../functions/store/stock-changes';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { BundlingOptions, NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { FUNCTION_TIMEOUT_SECONDS } from '../../functions/http/time-budget';
import { routeKeys, splitRouteKey } from '../../functions/http/route-keys';
import { tableAccess } from '../../functions/store/table';
import { productionBundling } from '../bundling';
import { Part } from './part';
import { type LogSettings, serviceFunction } from './service-function';
import { grantTableAccess } from './table-access';

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

/** A route key's method as CDK names it; a key with any other fails the synth, not the deploy. */
const httpMethod = (method: string): HttpMethod => {
  const known = Object.values(HttpMethod).find((value) => value === method);
  if (!known) throw new Error(`Route method ${method} is not an HTTP method API Gateway routes`);
  return known;
};

/** An HTTP handler, with the route keys it serves. */
export interface RouteHandler {
  readonly name: string;
  readonly fn: NodejsFunction;
  readonly routeKeys: readonly string[];
}

export interface ServiceApiProps {
  /** The table the handlers read and write, each only its own items. */
  readonly table: Table;
  /** Every route open to anyone, for demos; else every route requires IAM (SigV4). */
  readonly publicApi: boolean;
  /** Steady-state requests per second, and the burst above it, the stage accepts before answering 429. */
  readonly throttling: { readonly rateLimit: number; readonly burstLimit: number };
  /** Declares DYNAMODB_ENDPOINT on the handlers, for `sam local` only (AllocationStackProps). */
  readonly localDynamoDbEndpoint?: string;
  /** How many days the history keeps each change of stock: HISTORY_RETENTION_DAYS, which the batches handler writes with each change. */
  readonly historyRetentionDays: number;
  readonly logSettings: LogSettings;
}

/**
 * The HTTP API: its two handlers (batches, allocations), each allowed only its own items of the
 * table, their routes, and the stage with its throttling, access logs and per-route metrics.
 */
export class ServiceApi extends Part {
  readonly api: HttpApi;
  readonly stage: HttpStage;
  readonly handlers: readonly RouteHandler[];

  constructor(scope: Construct, id: string, { table, publicApi, throttling, localDynamoDbEndpoint, historyRetentionDays, logSettings }: ServiceApiProps) {
    super(scope, id);
    // Refused at synth: the functions would keep changes for the counts' window at least, whatever it says.
    if (!Number.isSafeInteger(historyRetentionDays) || historyRetentionDays < MIN_HISTORY_RETENTION_DAYS) {
      throw new Error(
        `historyRetentionDays must be a whole number of days, at least ${MIN_HISTORY_RETENTION_DAYS} (counts are applied as of their time for ${MIN_HISTORY_RETENTION_DAYS - 1}), not ${historyRetentionDays}`,
      );
    }
    const environment: Record<string, string> = {
      TABLE_NAME: table.tableName,
      HISTORY_RETENTION_DAYS: String(historyRetentionDays),
      // Stack traces point at the TypeScript source; the price is a slower cold start (the source
      // maps are parsed at load) and a slower `error.stack`, which only errors pay.
      NODE_OPTIONS: '--enable-source-maps',
      ...(localDynamoDbEndpoint === undefined ? {} : { DYNAMODB_ENDPOINT: localDynamoDbEndpoint }),
    };

    this.api = new HttpApi(this, 'Api', {
      apiName: Stack.of(this).stackName,
      description: 'Allocates order lines to batches of stock.',
      // The stage is created below, because only a stage we create takes throttling and access logs.
      createDefaultStage: false,
      defaultAuthorizer: publicApi ? new HttpNoneAuthorizer() : new HttpIamAuthorizer(),
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
    this.handlers = functions.map(({ name, entry, access, routeKeys: keys, bundling }) => {
      const { fn, role } = serviceFunction(this, name, {
        entry,
        environment,
        bundling,
        // The time budget the handler plans with (functions/http/time-budget.ts), under API Gateway's 30 s.
        timeout: Duration.seconds(FUNCTION_TIMEOUT_SECONDS),
        logSettings,
      });
      grantTableAccess(role, table.tableArn, access);
      return { name, fn, routeKeys: keys };
    });
    const routes = this.handlers.flatMap(({ name, fn, routeKeys: keys }) => {
      // One integration per function, shared by its routes; each route gets its own permission to invoke it.
      const integration = new HttpLambdaIntegration(`${name}Integration`, fn);
      return keys.flatMap((routeKey) => {
        const { method, path } = splitRouteKey(routeKey);
        return this.api.addRoutes({ path, methods: [httpMethod(method)], integration });
      });
    });
    if (publicApi) {
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
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: throttling,
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: accessLogFormat,
      },
      // Each route's own request count, errors and latency, for its p99 alarm and the dashboard.
      // Billed as custom metrics: six per route that had traffic in the hour.
      detailedMetricsEnabled: true,
    });
    // No X-Ray on the API: API Gateway traces REST APIs only (docs/operations.md).
  }
}
