import { describe, expect, it } from 'vitest';
import { routeKeys } from '../../../../functions/http/route-keys';
import { linesByBatchIndex } from '../../../../functions/store/table';
import { METRICS_NAMESPACE, SERVICE_NAME, metricNames } from '../../../../functions/telemetry-names';
import { tableOperations } from '../../../../infra/constructs/monitoring/metrics';
import { synthesize } from '../../synthesized';

const { stack, template } = synthesize();
const allRouteKeys = [...routeKeys.batches, ...routeKeys.allocations];
const functionNames = ['Batches', 'Allocations', 'PublishEvents', 'SweepHolds', 'ImportWorker'];

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
