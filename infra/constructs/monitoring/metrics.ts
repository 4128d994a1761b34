import { Duration } from 'aws-cdk-lib';
import type { HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { MathExpression, Metric, Stats } from 'aws-cdk-lib/aws-cloudwatch';
import { Operation, type Table } from 'aws-cdk-lib/aws-dynamodb';
import { type AllocationsRouteKey, type BatchesRouteKey, splitRouteKey } from '../../../functions/http/route-keys';
import { METRICS_NAMESPACE, OPERATION_DIMENSION, SERVICE_DIMENSION, SERVICE_NAME } from '../../../functions/telemetry-names';

/**
 * The DynamoDB operations the adapter sends (functions/store): the throttling and system-error
 * alarms add up these, and only these, as an alarm may read at most 10 metrics.
 */
export const tableOperations = [
  Operation.GET_ITEM,
  Operation.BATCH_GET_ITEM,
  Operation.QUERY,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.TRANSACT_GET_ITEMS,
  Operation.TRANSACT_WRITE_ITEMS,
] as const;

/** The routes that allocate, and the one that moves lines: their metrics are on the dashboard by name. */
export const SINGLE_LINE: AllocationsRouteKey = 'POST /allocate';
export const WHOLE_ORDER: AllocationsRouteKey = 'POST /orders';
export const BATCH_CHANGE: BatchesRouteKey = 'PATCH /batches/{ref}';

/**
 * One of the handlers' own metrics (functions/telemetry-names.ts): functions/telemetry.ts writes them in the
 * embedded metric format with exactly these dimensions, and CloudWatch finds a metric only by all of them.
 */
export const serviceMetric = (metricName: string, operation: string): Metric =>
  new Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { [SERVICE_DIMENSION]: SERVICE_NAME, [OPERATION_DIMENSION]: operation },
    statistic: Stats.SUM,
    label: `${metricName} ${operation}`,
  });

/** A route's latency: its own metric, which API Gateway names by the route's method and path (detailedMetricsEnabled). */
export const routeLatency = (stage: HttpStage, routeKey: string, statistic: string): Metric => {
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
export const tableOperationsSum = (table: Table, metricName: string, label: string): MathExpression => {
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
export const serviceMetricSearch = (metricName: string, dimensions: readonly string[]): MathExpression =>
  new MathExpression({
    expression: `SEARCH('{${[METRICS_NAMESPACE, SERVICE_DIMENSION, ...dimensions].join(',')}} MetricName="${metricName}"', 'Sum', 300)`,
    // Each line is then labelled with its dimensions' values.
    label: '',
    period: Duration.minutes(5),
  });
