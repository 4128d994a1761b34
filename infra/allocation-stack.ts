import { ArnFormat, type CfnElement, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  AlarmStatusWidget,
  type AlarmProps,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type GraphWidgetProps,
  type IMetric,
  LogQueryVisualizationType,
  LogQueryWidget,
  MathExpression,
  Metric,
  Stats,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { ApplicationLogLevel } from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { type AllocationsRouteKey, type BatchesRouteKey, splitRouteKey } from '../functions/http/route-keys';
import { linesByBatchIndex } from '../functions/store/table';
import {
  CAUSE_DIMENSION,
  METRICS_NAMESPACE,
  OPERATION_DIMENSION,
  PUBLISH_EVENTS_OPERATION,
  SERVICE_NAME,
  metricNames,
} from '../functions/telemetry-names';
import { DomainEvents } from './constructs/domain-events';
import { ServiceApi } from './constructs/http-api';
import { Part } from './constructs/part';
import type { LogSettings } from './constructs/service-function';
import { AllocationTable } from './constructs/table';

/**
 * The DynamoDB operations the adapter sends (functions/store): the throttling and system-error
 * alarms add up these, and only these, as an alarm may read at most 10 metrics.
 */
export const tableOperations = [
  Operation.GET_ITEM,
  Operation.BATCH_GET_ITEM,
  Operation.QUERY,
  Operation.PUT_ITEM,
  Operation.TRANSACT_GET_ITEMS,
  Operation.TRANSACT_WRITE_ITEMS,
] as const;


/** The routes that allocate, and the one that moves lines: their metrics are on the dashboard by name. */
const SINGLE_LINE: AllocationsRouteKey = 'POST /allocate';
const WHOLE_ORDER: AllocationsRouteKey = 'POST /orders';
const BATCH_CHANGE: BatchesRouteKey = 'PATCH /batches/{ref}';

/** Powertools Metrics' name for the dimension that carries SERVICE_NAME. */
const SERVICE_DIMENSION = 'service';

/**
 * The 5xx alarm's bounds: a rate, so that a busy hour's few errors do not page, with a floor of
 * errors, so that one error among three requests at night does not either.
 */
const SERVER_ERROR_PERCENT = 1;
const MIN_SERVER_ERRORS = 5;

/** How old a stream record may be when the consumer gets it before the events count as late. */
const LATE_EVENTS = Duration.minutes(5);

/** `GET /batches/{ref}` as a construct id: GetBatchesRef. */
const routeKeyId = (routeKey: string): string =>
  routeKey
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word.length > 0)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase())
    .join('');

/**
 * One of the handlers' own metrics (functions/telemetry-names.ts): Powertools writes them in the
 * embedded metric format with exactly these dimensions, and CloudWatch finds a metric only by all of them.
 */
const serviceMetric = (metricName: string, operation: string): Metric =>
  new Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { [SERVICE_DIMENSION]: SERVICE_NAME, [OPERATION_DIMENSION]: operation },
    statistic: Stats.SUM,
    label: `${metricName} ${operation}`,
  });

/** A route's latency: its own metric, which API Gateway names by the route's method and path (detailedMetricsEnabled). */
const routeLatency = (stage: HttpStage, routeKey: string, statistic: string): Metric => {
  const { method, path } = splitRouteKey(routeKey);
  return new Metric({
    namespace: 'AWS/ApiGateway',
    metricName: 'Latency',
    dimensionsMap: { ApiId: stage.api.apiId, Stage: stage.stageName, Method: method, Resource: path },
    statistic,
    label: routeKey,
  });
};

/**
 * A table metric summed over the operations the adapter sends. DynamoDB publishes these only when
 * they happen, and a sum with a missing term is missing: each operation counts 0 when it is silent.
 */
const tableOperationsSum = (table: Table, metricName: string, label: string): MathExpression => {
  const perOperation = Object.fromEntries(
    tableOperations.map((operation) => [
      `${metricName}_${operation}`.toLowerCase(),
      table.metric(metricName, { dimensionsMap: { TableName: table.tableName, Operation: operation }, statistic: Stats.SUM }),
    ]),
  );
  return new MathExpression({
    expression: Object.keys(perOperation)
      .map((id) => `FILL(${id}, 0)`)
      .join(' + '),
    usingMetrics: perOperation,
    label,
    period: Duration.minutes(5),
  });
};

/** One line per value of the dimensions besides the service, whatever values the handlers emit. */
const serviceMetricSearch = (metricName: string, dimensions: readonly string[]): MathExpression =>
  new MathExpression({
    expression: `SEARCH('{${[METRICS_NAMESPACE, SERVICE_DIMENSION, ...dimensions].join(',')}} MetricName="${metricName}"', 'Sum', 300)`,
    // Each line is then labelled with its dimensions' values.
    label: '',
    period: Duration.minutes(5),
  });

/** What the stack watches of the domain events' delivery. */
interface WatchedEvents {
  readonly consumer: NodejsFunction;
  readonly deadLetters: Queue;
  readonly iteratorAge: Metric;
}

/** What the alarms and the dashboard watch. */
interface Watched {
  readonly stage: HttpStage;
  readonly table: Table;
  /** Each function, with the route keys it serves (none for the stream consumer). */
  readonly functions: readonly { name: string; fn: NodejsFunction; routeKeys: readonly string[] }[];
  readonly events: WatchedEvents;
  readonly p99LatencyMs: number;
}

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
  /**
   * The least severe of the functions' own log lines that is written (POWERTOOLS_LOG_LEVEL), but
   * for the invocations sampled at `debugSampleRate`. Set with `-c logLevel=DEBUG`.
   * @default ApplicationLogLevel.INFO - one line per request, and what goes wrong
   */
  readonly logLevel?: ApplicationLogLevel;
  /**
   * The share of invocations, 0 to 1, whose DEBUG lines are written whatever `logLevel` says
   * (POWERTOOLS_LOGGER_SAMPLE_RATE): the retried transactions and lost races of a sample of
   * requests, without the cost of DEBUG everywhere. Set with `-c debugSampleRate=0.05`.
   * @default 0.01
   */
  readonly debugSampleRate?: number;
  /**
   * The p99 latency of a route, in milliseconds, above which its alarm goes off. Set with
   * `-c p99LatencyMs=<n>`.
   * @default 1000 - about ten times a warm allocation's p99 under load (docs/performance.md)
   */
  readonly p99LatencyMs?: number;
  /**
   * An address that gets every alarm and its recovery by e-mail, once its owner confirms the
   * subscription. Set with `-c alarmEmail=ops@example.com`.
   * @default - no subscription: subscribe to the topic of the AlarmTopicArn output yourself
   */
  readonly alarmEmail?: string;
}

export class AllocationStack extends Stack {
  private readonly logSettings: LogSettings;
  private readonly alarmAction: SnsAction;
  private readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: AllocationStackProps = {}) {
    super(scope, id, props);
    this.logSettings = { logLevel: props.logLevel ?? ApplicationLogLevel.INFO, debugSampleRate: props.debugSampleRate ?? 0.01 };
    this.alarmAction = new SnsAction(this.alarmTopic(props.alarmEmail));

    const table = new AllocationTable(this, 'Table');

    const { stage, handlers } = new ServiceApi(this, 'HttpApi', {
      table,
      publicApi: props.publicApi ?? false,
      throttling: { rateLimit: props.throttlingRateLimit ?? 100, burstLimit: props.throttlingBurstLimit ?? 200 },
      localDynamoDbEndpoint: props.localDynamoDbEndpoint,
      logSettings: this.logSettings,
    });

    new CfnOutput(this, 'ApiUrl', { value: stage.url, description: 'Base URL of the HTTP API.' });
    new CfnOutput(this, 'TableName', { value: table.tableName, description: 'The DynamoDB table.' });

    const events = this.domainEvents(table);
    const watched: Watched = {
      stage,
      table,
      functions: [...handlers, { name: 'PublishEvents', fn: events.consumer, routeKeys: [] }],
      events,
      p99LatencyMs: props.p99LatencyMs ?? 1000,
    };
    this.raiseServiceAlarms(watched);
    this.dashboard(watched);
  }

  /**
   * Where every alarm, and its return to OK, is sent: a topic whose ARN is an output, with an
   * e-mail subscription when the operator names an address.
   */
  private alarmTopic(email: string | undefined): Topic {
    // A key of our own: CloudWatch cannot publish to a topic under SNS's AWS-managed key, whose
    // policy no one can change to let it use the key, and the alarms would fail silently.
    const key = new Key(this, 'AlarmTopicKey', {
      description: `Encrypts the alarm notifications of ${this.stackName}.`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    key.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
      }),
    );
    const topic = new Topic(this, 'AlarmTopic', {
      displayName: `${this.stackName} alarms`,
      masterKey: key,
      enforceSSL: true,
    });
    // The policy enforceSSL writes replaces the topic's default one, which let the account's alarms publish.
    topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowAlarmsOfThisAccount',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: {
          ArnLike: {
            'aws:SourceArn': this.formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
          },
        },
      }),
    );
    if (email !== undefined) topic.addSubscription(new EmailSubscription(email));
    new CfnOutput(this, 'AlarmTopicArn', {
      value: topic.topicArn,
      description: 'Every alarm of the service and its return to OK are published here.',
    });
    return topic;
  }

  /** An alarm that notifies the alarm topic when it goes off and when it is over. */
  private raiseAlarm(id: string, props: AlarmProps): void {
    const alarm = new Alarm(this, id, props);
    alarm.addAlarmAction(this.alarmAction);
    alarm.addOkAction(this.alarmAction);
    this.alarms.push(alarm);
  }

  /**
   * The alarms on the API, the functions and the table. Each description says what went wrong and
   * where to look first: it is the text of the e-mail. The stream's alarms are with the stream
   * (domainEvents).
   */
  private raiseServiceAlarms({ stage, table, functions, events, p99LatencyMs }: Watched): void {
    const dashboardName = this.stackName;
    const fiveMinutes = Duration.minutes(5);
    const httpLogGroups = functions
      .filter(({ routeKeys: keys }) => keys.length > 0)
      .map(({ fn }) => fn.logGroup.logGroupName)
      .join(' and ');

    this.raiseAlarm('ApiServerErrorsAlarm', {
      alarmDescription: [
        `The API answered 5xx to more than ${SERVER_ERROR_PERCENT}% of requests (at least ${MIN_SERVER_ERRORS}) in 5 minutes.`,
        `First open dashboard ${dashboardName}: "503s by cause" tells a store outage (StoreUnavailable) from a hot SKU`,
        '(BatchContended, AllocationContended); function errors or throttles mean API Gateway answered for a function',
        `that could not. Then Logs Insights on ${httpLogGroups}:`,
        'filter status >= 500 | stats count() by route, outcome. A 503 is safe to repeat; a 500 is a bug:',
        'if it began with a deploy, roll back.',
      ].join(' '),
      metric: new MathExpression({
        expression: `IF(errors >= ${MIN_SERVER_ERRORS}, 100 * errors / requests, 0)`,
        usingMetrics: { errors: stage.metricServerError(), requests: stage.metricCount({ statistic: Stats.SUM }) },
        label: '5xx, % of requests',
        period: fiveMinutes,
      }),
      threshold: SERVER_ERROR_PERCENT,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      // No requests, no errors.
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const slowRouteHints = new Map<string, string>([
      [BATCH_CHANGE, 'A batch change moves its lines one transaction each: see LinesReallocated.'],
      [WHOLE_ORDER, 'An order reads each of its SKUs, up to 25 Queries, before its transaction.'],
    ]);
    for (const { fn, routeKeys: keys } of functions) {
      for (const routeKey of keys) {
        this.raiseAlarm(`LatencyAlarm${routeKeyId(routeKey)}`, {
          alarmDescription: [
            `${routeKey} answered its slowest 1% in more than ${p99LatencyMs} ms for 10 minutes.`,
            `First open dashboard ${dashboardName}: if every route is slow, look at the store (DynamoDB latency and throttles,`,
            'ConflictsRetried) and the functions (Duration, cold starts after a deploy); if only this one, Logs Insights on',
            `${fn.logGroup.logGroupName}: filter route = "${routeKey}" | sort durationMs desc | limit 20.`,
            slowRouteHints.get(routeKey) ?? '',
            `The bound is -c p99LatencyMs (now ${p99LatencyMs}).`,
          ]
            .filter((sentence) => sentence.length > 0)
            .join(' '),
          metric: routeLatency(stage, routeKey, Stats.p(99)).with({ period: fiveMinutes }),
          threshold: p99LatencyMs,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          // Two periods in a row: one cold start is the p99 of a quiet period, not a slow route.
          evaluationPeriods: 2,
          // A route nobody called is not slow.
          treatMissingData: TreatMissingData.NOT_BREACHING,
        });
      }
    }

    for (const { name, fn } of functions) {
      const isConsumer = fn === events.consumer;
      this.raiseAlarm(`${name}ErrorsAlarm`, {
        alarmDescription: [
          `${fn.functionName} failed invocations without answering: a timeout, running out of memory, or a crash at start.`,
          'The handler answers every error it catches, so this is a bug or a bad deploy.',
          isConsumer
            ? 'Its batch of stream records is split and retried, so events are late (iterator age).'
            : 'API Gateway answered 5xx for each.',
          `First Logs Insights on ${fn.logGroup.logGroupName}: filter level = "ERROR" or record.status in ["error", "timeout"]`,
          '| sort @timestamp desc | limit 20. If it began with a deploy, roll back.',
        ].join(' '),
        metric: fn.metricErrors({ period: fiveMinutes }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        // Lambda reports nothing for a function nobody invoked.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      this.raiseAlarm(`${name}ThrottlesAlarm`, {
        alarmDescription: [
          `Lambda refused to run ${fn.functionName}: the region's concurrent executions are used up, by these or any`,
          'other functions of the account (a new account may have as few as 10).',
          isConsumer ? 'The stream waits, so events are late.' : 'API Gateway answered 5xx instead.',
          `First open dashboard ${dashboardName}, "Concurrent executions", then Service Quotas, AWS Lambda,`,
          'Concurrent executions: raise the quota, or find the function that takes it all.',
        ].join(' '),
        metric: fn.metricThrottles({ period: fiveMinutes }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    }

    this.raiseAlarm('TableThrottlesAlarm', {
      alarmDescription: [
        `Table ${table.tableName} throttled requests in 2 of the last 3 five-minute periods. The SDK and the adapter`,
        'retry them, so clients see slower answers, then 503 StoreUnavailable.',
        `First open dashboard ${dashboardName}: consumed capacity against docs/capacity.md, Ceilings. On demand,`,
        'throttling means one partition over its limit (a hot SKU: about 1,000 write units/s) or traffic over twice',
        'its previous peak. To find a hot key, turn on CloudWatch Contributor Insights for the table.',
      ].join(' '),
      metric: tableOperationsSum(table, 'ThrottledRequests', 'throttled requests'),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      // A burst DynamoDB adapts to within minutes is not worth a page; throttling that persists is.
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.raiseAlarm('TableSystemErrorsAlarm', {
      alarmDescription: [
        `DynamoDB answered requests to table ${table.tableName} with its own internal errors in 2 of the last 3`,
        'five-minute periods. The SDK retries them; clients see 503 StoreUnavailable when retries run out.',
        'First check the AWS Health Dashboard for DynamoDB in this region. Nothing in the service causes them:',
        `if they persist, open a support case with request ids from the errors in ${httpLogGroups}.`,
      ].join(' '),
      metric: tableOperationsSum(table, 'SystemErrors', 'system errors'),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }

  /**
   * The one page an operator opens first, named after the stack: every alarm's state, then the
   * API, what the handlers decided, the table, the events' delivery and the functions.
   */
  private dashboard({ stage, table, functions, events, p99LatencyMs }: Watched): void {
    const graph = (title: string, left: IMetric[], more: Omit<GraphWidgetProps, 'title' | 'left'> = {}) =>
      new GraphWidget({ title, left, width: 8, height: 6, ...more });
    const allRouteKeys = functions.flatMap(({ routeKeys: keys }) => keys);
    const allocatingRoutes = [SINGLE_LINE, WHOLE_ORDER];

    const dashboard = new Dashboard(this, 'Dashboard', { dashboardName: this.stackName, defaultInterval: Duration.hours(3) });
    dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 5 }));
    dashboard.addWidgets(
      graph('Requests and errors', [stage.metricCount({ statistic: Stats.SUM, label: 'requests' })], {
        right: [stage.metricClientError({ label: '4xx' }), stage.metricServerError({ label: '5xx' })],
      }),
      graph('p50 latency by route (ms)', allRouteKeys.map((routeKey) => routeLatency(stage, routeKey, Stats.p(50)))),
      graph('p99 latency by route (ms)', allRouteKeys.map((routeKey) => routeLatency(stage, routeKey, Stats.p(99))), {
        leftAnnotations: [{ value: p99LatencyMs, label: 'alarm' }],
      }),
    );
    dashboard.addWidgets(
      graph(
        'Allocations vs refusals',
        [
          ...allocatingRoutes.map((route) => serviceMetric(metricNames.linesAllocated, route)),
          serviceMetric(metricNames.ordersAllocated, WHOLE_ORDER),
        ],
        {
          right: allocatingRoutes.flatMap((route) => [
            serviceMetric(metricNames.outOfStock, route),
            serviceMetric(metricNames.invalidSku, route),
          ]),
        },
      ),
      graph(
        'Conflicts and lines moved',
        [
          serviceMetricSearch(metricNames.conflictsRetried, [OPERATION_DIMENSION]),
          serviceMetricSearch(metricNames.conflictsLost, [OPERATION_DIMENSION]),
        ],
        { right: [serviceMetric(metricNames.linesReallocated, BATCH_CHANGE)] },
      ),
      graph('503s by cause', [serviceMetricSearch(metricNames.unavailable, [CAUSE_DIMENSION, OPERATION_DIMENSION])]),
    );
    dashboard.addWidgets(
      graph('DynamoDB consumed capacity (units per 5 minutes)', [
        table.metricConsumedReadCapacityUnits({ label: 'read, table' }),
        table.metricConsumedWriteCapacityUnits({ label: 'write, table' }),
        table.metric('ConsumedWriteCapacityUnits', {
          dimensionsMap: { TableName: table.tableName, GlobalSecondaryIndexName: linesByBatchIndex.name },
          statistic: Stats.SUM,
          label: `write, index ${linesByBatchIndex.name}`,
        }),
      ]),
      graph('DynamoDB throttles and system errors', [
        tableOperationsSum(table, 'ThrottledRequests', 'throttled requests'),
        tableOperationsSum(table, 'SystemErrors', 'system errors'),
      ]),
      graph(
        'DynamoDB latency, p99 (ms)',
        tableOperations.map((operation) =>
          table.metricSuccessfulRequestLatency({
            dimensionsMap: { TableName: table.tableName, Operation: operation },
            statistic: Stats.p(99),
            label: operation,
          }),
        ),
      ),
    );
    dashboard.addWidgets(
      graph('Event delivery', [
        serviceMetric(metricNames.eventsPublished, PUBLISH_EVENTS_OPERATION),
        serviceMetric(metricNames.eventsFailed, PUBLISH_EVENTS_OPERATION),
      ]),
      graph('Consumer iterator age, max (ms)', [events.iteratorAge], {
        leftAnnotations: [{ value: LATE_EVENTS.toMilliseconds(), label: 'alarm' }],
      }),
      graph('Dead-letter queue: record batches to re-drive', [
        events.deadLetters.metricApproximateNumberOfMessagesVisible({ statistic: Stats.MAXIMUM, label: 'messages' }),
      ]),
    );
    dashboard.addWidgets(
      graph(
        'Function errors and throttles',
        functions.flatMap(({ name, fn }) => [fn.metricErrors({ label: `${name} errors` }), fn.metricThrottles({ label: `${name} throttles` })]),
      ),
      graph(
        'Function duration, p50 and p99 (ms)',
        functions.flatMap(({ name, fn }) => [
          fn.metricDuration({ statistic: Stats.p(50), label: `${name} p50` }),
          fn.metricDuration({ statistic: Stats.p(99), label: `${name} p99` }),
        ]),
      ),
      graph(
        'Concurrent executions, max',
        functions.map(({ name, fn }) => fn.metric('ConcurrentExecutions', { statistic: Stats.MAXIMUM, label: name })),
      ),
    );
    // From each invocation's report (system log level INFO): how often a cold start happens and what it costs.
    dashboard.addWidgets(
      new LogQueryWidget({
        title: 'Cold starts: init duration (ms) and memory used (MB)',
        logGroupNames: functions.map(({ fn }) => fn.logGroup.logGroupName),
        queryLines: [
          'filter type = "platform.report" and ispresent(record.metrics.initDurationMs)',
          'stats count(*) as coldStarts, pct(record.metrics.initDurationMs, 50) as p50, ' +
            'pct(record.metrics.initDurationMs, 99) as p99, max(record.metrics.maxMemoryUsedMB) as maxMemory by @log',
        ],
        view: LogQueryVisualizationType.TABLE,
        width: 24,
        height: 5,
      }),
    );

    new CfnOutput(this, 'DashboardUrl', {
      value: `https://${this.region}.console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards:name=${dashboard.dashboardName}`,
      description: 'The CloudWatch dashboard: alarms, API, allocations, table, events, functions.',
    });
  }

  /** The domain events (./constructs/domain-events), and the alarms on their delivery. */
  private domainEvents(table: Table): WatchedEvents {
    const { bus, deadLetters, consumer: fn } = new DomainEvents(this, 'DomainEvents', { table, logSettings: this.logSettings });

    this.raiseAlarm('PublishEventsDeadLettersAlarm', {
      alarmDescription: [
        `Domain events are missing: stream records of the table failed every retry to reach the bus ${bus.eventBusName}.`,
        `First read (do not delete) the message in queue ${deadLetters.queueName}: its DDBStreamBatchInfo names the`,
        "stream, the shard and the first and last sequence numbers. Within 24 hours of the change (the stream's",
        'retention; records reach the queue at most 6 hours old), read those records with GetShardIterator',
        `(AT_SEQUENCE_NUMBER) and GetRecords, and find why in the log of ${fn.functionName} (each failure names`,
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

    new CfnOutput(this, 'EventBusName', { value: bus.eventBusName, description: 'The bus the domain events are put on.' });
    new CfnOutput(this, 'EventBusArn', { value: bus.eventBusArn, description: 'The ARN of the bus the domain events are put on.' });
    new CfnOutput(this, 'EventsDeadLetterQueueUrl', {
      value: deadLetters.queueUrl,
      description: 'Pointers to the stream records whose events could not be published.',
    });

    const iteratorAge = fn.metric('IteratorAge', { statistic: Stats.MAXIMUM, period: Duration.minutes(5), label: 'iterator age' });
    this.raiseAlarm('PublishEventsIteratorAgeAlarm', {
      alarmDescription: [
        `Domain events are late: ${fn.functionName} got stream records more than ${LATE_EVENTS.toMinutes()} minutes after`,
        `their change. First open dashboard ${this.stackName}, "Event delivery": EventsFailed means EventBridge refuses`,
        `them (Logs Insights on ${fn.logGroup.logGroupName}: filter level = "ERROR"); errors or throttles of the function`,
        'mean it cannot keep up. A record that keeps failing holds its shard for at most 11 invocations; records 6 hours',
        'old go to the dead-letter queue, which has its own alarm.',
      ].join(' '),
      metric: iteratorAge,
      threshold: LATE_EVENTS.toMilliseconds(),
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      // A stream with no changes invokes nothing, and reports no age.
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    return { consumer: fn, deadLetters, iteratorAge };
  }

  /**
   * CDK makes a resource's logical id from its path in the stack. The stack was one flat construct
   * until its parts became constructs of their own, so their ids are left out of that path: every
   * resource keeps the logical id it had, and an upgrade of a deployed stack replaces none of them,
   * the table, the bus, the queue and the log groups with their logs included
   * (test/infra/allocation-stack.test.ts pins them).
   */
  protected override allocateLogicalId(element: CfnElement): string {
    const scopes = element.node.scopes.filter((scope) => !(scope instanceof Part));
    return super.allocateLogicalId(Object.create(element, { node: { value: { scopes } } }));
  }
}
