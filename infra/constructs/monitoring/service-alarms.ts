import { Duration } from 'aws-cdk-lib';
import type { HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { ComparisonOperator, MathExpression, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { BATCH_CHANGE, WHOLE_ORDER, routeLatency, tableOperationsSum } from './metrics';
import type { RaiseAlarm } from './raise-alarm';

/**
 * The 5xx alarm's bounds: a rate, so that a busy hour's few errors do not page, with a floor of
 * errors, so that one error among three requests at night does not either.
 */
const SERVER_ERROR_PERCENT = 1;
const MIN_SERVER_ERRORS = 5;

/** A function the monitoring watches, what invokes it, and the route keys it serves (none but for the API's). */
export interface WatchedFunction {
  readonly name: string;
  readonly fn: NodejsFunction;
  readonly invokedBy: 'api' | 'stream' | 'schedule' | 'stateMachine';
  readonly routeKeys: readonly string[];
}

/**
 * What a failed invocation, and a throttled one, mean for each kind of function, and for the
 * sweeper where to look first: its errors are its own (a sweep that failed logs why), not a bug
 * that answered nothing.
 */
const consequences = (fn: NodejsFunction) => ({
  api: {
    failed: [
      `${fn.functionName} failed invocations without answering: a timeout, running out of memory, or a crash at start.`,
      'The handler answers every error it catches, so this is a bug or a bad deploy. API Gateway answered 5xx for each.',
    ],
    firstLook: 'filter level = "ERROR" or record.status in ["error", "timeout"]',
    throttled: 'API Gateway answered 5xx instead.',
  },
  stream: {
    failed: [
      `${fn.functionName} failed invocations without answering: a timeout, running out of memory, or a crash at start.`,
      'The handler answers every error it catches, so this is a bug or a bad deploy.',
      'Its batch of stream records is split and retried, so events are late (iterator age).',
    ],
    firstLook: 'filter level = "ERROR" or record.status in ["error", "timeout"]',
    throttled: 'The stream waits, so events are late.',
  },
  schedule: {
    failed: [
      `A hold sweep of ${fn.functionName} failed: it could not read the expired holds or count the overdue ones`,
      '(the store did not answer), or it timed out, ran out of memory or crashed at start (a sweep stops at its own',
      "deadline, so a timeout is a bug). Nothing retries it: the next minute's sweep is the retry. No sale waits on it",
      "(an expired hold's units are free the moment it expires), but HoldReleased events of reason expired are late.",
    ],
    firstLook: 'filter message = "Hold sweep failed" or record.status in ["error", "timeout"]',
    throttled:
      "Lambda keeps a throttled sweep and runs it later. No sale waits on it (an expired hold's units are free the moment it expires), but holds end late.",
  },
  stateMachine: {
    failed: [
      `A step of an import failed in ${fn.functionName}: the store did not answer, or it timed out or crashed.`,
      'Step Functions runs the step again, up to 5 times: every step is recorded once, so a retry applies no row twice.',
      'An import whose step failed every time stays running: see ImportExecutionsFailedAlarm.',
    ],
    firstLook: 'filter message = "Import step failed" or record.status in ["error", "timeout"]',
    throttled: 'Step Functions runs the throttled step again, so the import is slower.',
  },
});

/** What the service's alarms watch. */
export interface WatchedService {
  readonly stage: HttpStage;
  readonly table: Table;
  readonly functions: readonly WatchedFunction[];
  readonly p99LatencyMs: number;
  readonly dashboardName: string;
}

/** `GET /batches/{ref}` as a construct id: GetBatchesRef. */
const routeKeyId = (routeKey: string): string =>
  routeKey
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word.length > 0)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase())
    .join('');

/**
 * The alarms on the API, the functions and the table. Each description says what went wrong and
 * where to look first: it is the text of the e-mail.
 */
export const raiseServiceAlarms = (raise: RaiseAlarm, { stage, table, functions, p99LatencyMs, dashboardName }: WatchedService): void => {
  const fiveMinutes = Duration.minutes(5);
  const httpLogGroups = functions
    .filter(({ routeKeys: keys }) => keys.length > 0)
    .map(({ fn }) => fn.logGroup.logGroupName)
    .join(' and ');

  raise('ApiServerErrorsAlarm', {
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
      raise(`LatencyAlarm${routeKeyId(routeKey)}`, {
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

  for (const { name, fn, invokedBy } of functions) {
    const { failed, firstLook, throttled } = consequences(fn)[invokedBy];
    raise(`${name}ErrorsAlarm`, {
      alarmDescription: [
        ...failed,
        `First Logs Insights on ${fn.logGroup.logGroupName}: ${firstLook}`,
        '| sort @timestamp desc | limit 20. If it began with a deploy, roll back.',
      ].join(' '),
      metric: fn.metricErrors({ period: fiveMinutes }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      // Lambda reports nothing for a function nobody invoked.
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    raise(`${name}ThrottlesAlarm`, {
      alarmDescription: [
        `Lambda refused to run ${fn.functionName}: the region's concurrent executions are used up, by these or any`,
        'other functions of the account (a new account may have as few as 10).',
        throttled,
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

  raise('TableThrottlesAlarm', {
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
  raise('TableSystemErrorsAlarm', {
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
};
