import { Duration } from 'aws-cdk-lib';
import {
  type Alarm,
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  type GraphWidgetProps,
  type IMetric,
  LogQueryVisualizationType,
  LogQueryWidget,
  Stats,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import { linesByBatchIndex } from '../../../functions/store/table';
import { CAUSE_DIMENSION, OPERATION_DIMENSION, PUBLISH_EVENTS_OPERATION, SWEEP_HOLDS_OPERATION, metricNames } from '../../../functions/telemetry-names';
import { LATE_EVENTS, type WatchedEvents, iteratorAgeOf } from './event-alarms';
import {
  BATCH_CHANGE,
  SINGLE_LINE,
  WHOLE_ORDER,
  routeLatency,
  serviceMetric,
  serviceMetricSearch,
  tableOperations,
  tableOperationsSum,
} from './metrics';
import type { WatchedService } from './service-alarms';

/**
 * The one page an operator opens first, the construct `Dashboard` in `scope`, named `dashboardName`:
 * every alarm's state, then the API, what the handlers decided, the table, the events' delivery and
 * the functions.
 */
export const serviceDashboard = (
  scope: Construct,
  { stage, table, functions, p99LatencyMs, dashboardName }: WatchedService,
  events: WatchedEvents,
  alarms: readonly Alarm[],
): Dashboard => {
  const graph = (title: string, left: IMetric[], more: Omit<GraphWidgetProps, 'title' | 'left'> = {}) =>
    new GraphWidget({ title, left, width: 8, height: 6, ...more });
  const allRouteKeys = functions.flatMap(({ routeKeys: keys }) => keys);
  const allocatingRoutes = [SINGLE_LINE, WHOLE_ORDER];

  const dashboard = new Dashboard(scope, 'Dashboard', { dashboardName, defaultInterval: Duration.hours(3) });
  dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms: [...alarms], width: 24, height: 5 }));
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
    graph(
      'Holds placed and how they ended',
      [metricNames.holdsPlaced, metricNames.holdsConfirmed, metricNames.holdsReleased, metricNames.holdsExpired].map((name) =>
        serviceMetricSearch(name, [OPERATION_DIMENSION]),
      ),
      { width: 24, right: [serviceMetric(metricNames.holdsOverdue, SWEEP_HOLDS_OPERATION).with({ statistic: Stats.MAXIMUM })] },
    ),
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
    graph('Consumer iterator age, max (ms)', [iteratorAgeOf(events.consumer)], {
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
  return dashboard;
};
