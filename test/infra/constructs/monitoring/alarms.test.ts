import { readFileSync, readdirSync } from 'node:fs';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { routeKeys } from '../../../../functions/http/route-keys';
import { tableOperations } from '../../../../infra/constructs/monitoring/metrics';
import { type AlarmResource, alarmsOf, expressionOf, metricsRead, textOf } from '../../alarm-resources';
import { logicalIdOf } from '../../cdk-app';
import { synthesize } from '../../synthesized';

const { stack, template } = synthesize();
const table = logicalIdOf(stack, 'Table');
const allRouteKeys = [...routeKeys.batches, ...routeKeys.allocations];
const functionNames = ['Batches', 'Allocations', 'PublishEvents', 'SweepHolds', 'ImportWorker'];

describe('the alarms', () => {
  const alarms = (from: Template = template) => alarmsOf(from);
  const alarmNamed = (id: string) => template.toJSON().Resources[logicalIdOf(stack.monitoring, id)] as AlarmResource;
  const latencyAlarmOf = (routeKey: string, from: Template = template) => {
    const [method, path] = routeKey.split(' ');
    return alarms(from).filter((alarm) =>
      metricsRead(alarm).some(({ metricName, dimensions }) => metricName === 'Latency' && dimensions.Method === method && dimensions.Resource === path),
    );
  };
  const api = { Ref: logicalIdOf(stack.api, 'Api') };

  it('are one on the 5xx rate, one per route, two per function, two on the table, two on the events, one on the sweeper and one on the imports', () => {
    expect(alarms()).toHaveLength(1 + allRouteKeys.length + 2 * functionNames.length + 2 + 2 + 1 + 1);
  });

  it('notify the alarm topic when they go off and when they are over', () => {
    const topic = [{ Ref: logicalIdOf(stack.monitoring, 'AlarmTopic') }];
    for (const { Properties } of alarms()) {
      expect(Properties.AlarmActions).toEqual(topic);
      expect(Properties.OKActions).toEqual(topic);
    }
  });

  it("each say what happened and what to do first, within CloudWatch's 1,024 characters however long the generated names", () => {
    for (const { Properties } of alarms()) {
      const text = textOf(Properties.AlarmDescription, 'x'.repeat(80));
      expect(text).toMatch(/\bFirst\b/);
      expect(text.length).toBeGreaterThan(200);
      expect(text.length).toBeLessThanOrEqual(1024);
    }
  });

  it('go off when more than 1% of the requests of 5 minutes answer 5xx, and at least 5 do', () => {
    const alarm = alarmNamed('ApiServerErrorsAlarm');
    expect(expressionOf(alarm)).toBe('IF(errors >= 5, 100 * errors / requests, 0)');
    const stage = { ApiId: api, Stage: '$default' };
    expect(metricsRead(alarm)).toEqual([
      { id: 'errors', namespace: 'AWS/ApiGateway', metricName: '5xx', dimensions: stage, stat: 'Sum', period: 300 },
      { id: 'requests', namespace: 'AWS/ApiGateway', metricName: 'Count', dimensions: stage, stat: 'Sum', period: 300 },
    ]);
    expect(alarm.Properties).toMatchObject({
      Threshold: 1,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it.each(allRouteKeys)('go off when %s answers its slowest 1% in more than 1,000 ms for 10 minutes', (routeKey) => {
    const [method, path] = routeKey.split(' ');
    const [alarm, ...others] = latencyAlarmOf(routeKey);
    expect(others).toEqual([]);
    expect(metricsRead(alarm as AlarmResource)).toEqual([
      expect.objectContaining({
        namespace: 'AWS/ApiGateway',
        dimensions: { ApiId: api, Stage: '$default', Method: method, Resource: path },
        stat: 'p99',
        period: 300,
      }),
    ]);
    expect(alarm?.Properties).toMatchObject({
      Threshold: 1000,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 2,
      TreatMissingData: 'notBreaching',
    });
    expect(textOf(alarm?.Properties.AlarmDescription ?? '')).toContain(`filter route = "${routeKey}"`);
  });

  it('hold every route to the p99 of -c p99LatencyMs', () => {
    const tuned = synthesize({ p99LatencyMs: '750' }).template;
    expect(allRouteKeys.map((routeKey) => latencyAlarmOf(routeKey, tuned)[0]?.Properties.Threshold)).toEqual(allRouteKeys.map(() => 750));
  });

  it("read each route's own metrics, which the stage publishes only when told to", () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', { DefaultRouteSettings: Match.objectLike({ DetailedMetricsEnabled: true }) });
  });

  it.each(functionNames)('go off at the first error, and at the first throttle, of the %s function in 5 minutes', (name) => {
    const fn = { Ref: logicalIdOf(stack, `${name}Function`) };
    for (const [id, metricName] of [
      [`${name}ErrorsAlarm`, 'Errors'],
      [`${name}ThrottlesAlarm`, 'Throttles'],
    ] as const) {
      const alarm = alarmNamed(id);
      expect(metricsRead(alarm)).toEqual([{ namespace: 'AWS/Lambda', metricName, dimensions: { FunctionName: fn }, stat: 'Sum', period: 300 }]);
      expect(alarm.Properties).toMatchObject({
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
    }
  });

  it("give the sweeper's errors and throttles a runbook of their own, not the API's or the stream consumer's", () => {
    const errors = textOf(alarmNamed('SweepHoldsErrorsAlarm').Properties.AlarmDescription);
    const throttles = textOf(alarmNamed('SweepHoldsThrottlesAlarm').Properties.AlarmDescription);
    for (const text of [errors, throttles]) {
      expect(text).not.toMatch(/stream|API Gateway/);
      expect(text).toMatch(/No sale waits on it/);
    }
    expect(errors).toMatch(/filter message = "Hold sweep failed"/);
    expect(errors).toMatch(/the next minute's sweep is the retry/);
  });

  it.each([
    ['TableThrottlesAlarm', 'ThrottledRequests'],
    ['TableSystemErrorsAlarm', 'SystemErrors'],
  ])('%s goes off at %s of any operation in 2 of 3 five-minute periods, an operation with none counting 0', (id, metricName) => {
    const alarm = alarmNamed(id);
    const read = metricsRead(alarm);
    expect(read.map(({ dimensions }) => dimensions.Operation)).toEqual([...tableOperations]);
    for (const metric of read) {
      expect(metric).toMatchObject({ namespace: 'AWS/DynamoDB', metricName, dimensions: { TableName: { Ref: table } }, stat: 'Sum', period: 300 });
    }
    expect(expressionOf(alarm)).toBe(read.map(({ id: metricId }) => `FILL(${metricId}, 0)`).join(' + '));
    // CloudWatch refuses an alarm that reads more than 10 metrics.
    expect(read.length).toBeLessThanOrEqual(10);
    expect(alarm.Properties).toMatchObject({ Threshold: 1, EvaluationPeriods: 3, DatapointsToAlarm: 2, TreatMissingData: 'notBreaching' });
  });

  it('on the table count every DynamoDB operation the adapter sends', () => {
    // The Document client's commands, by the operation DynamoDB names them by in its metrics.
    const operationOf: Record<string, string> = {
      Get: 'GetItem',
      Put: 'PutItem',
      Update: 'UpdateItem',
      Delete: 'DeleteItem',
      BatchGet: 'BatchGetItem',
      BatchWrite: 'BatchWriteItem',
      TransactGet: 'TransactGetItems',
      TransactWrite: 'TransactWriteItems',
      Query: 'Query',
      Scan: 'Scan',
    };
    const storeDirectory = new URL('../../../../functions/store/', import.meta.url);
    const sent = readdirSync(storeDirectory)
      .filter((file) => file.endsWith('.ts'))
      .flatMap((file) => [...readFileSync(new URL(file, storeDirectory), 'utf8').matchAll(/new (\w+?)(?:Item)?Command\(/g)])
      .map(([, command = '']) => operationOf[command] ?? command);
    expect(sent.length).toBeGreaterThan(0);
    expect([...tableOperations]).toEqual(expect.arrayContaining([...new Set(sent)]));
  });

  it('go off when the stream consumer gets records more than 5 minutes after their change', () => {
    const alarm = alarmNamed('PublishEventsIteratorAgeAlarm');
    expect(metricsRead(alarm)).toEqual([
      expect.objectContaining({
        namespace: 'AWS/Lambda',
        metricName: 'IteratorAge',
        dimensions: { FunctionName: { Ref: logicalIdOf(stack.events, 'PublishEventsFunction') } },
        stat: 'Maximum',
        period: 300,
      }),
    ]);
    expect(alarm.Properties).toMatchObject({ Threshold: 5 * 60 * 1000, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'notBreaching' });
  });
});

describe('the domain events', () => {
  it('that fail raise an alarm on the first message in the dead-letter queue, which says what to do first', () => {
    const alarm = template.toJSON().Resources[logicalIdOf(stack.monitoring, 'PublishEventsDeadLettersAlarm')];
    expect(alarm.Properties).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalIdOf(stack.events, 'PublishEventsDeadLetters'), 'QueueName'] } }],
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
  });
});
