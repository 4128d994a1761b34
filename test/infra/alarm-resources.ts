import type { Template } from 'aws-cdk-lib/assertions';

export interface AlarmResource {
  Properties: {
    AlarmDescription: string | { 'Fn::Join': [string, unknown[]] };
    AlarmActions?: unknown[];
    OKActions?: unknown[];
    Threshold: number;
    ComparisonOperator: string;
    EvaluationPeriods: number;
    DatapointsToAlarm?: number;
    TreatMissingData?: string;
    Namespace?: string;
    MetricName?: string;
    Dimensions?: { Name: string; Value: unknown }[];
    Statistic?: string;
    ExtendedStatistic?: string;
    Period?: number;
    Metrics?: {
      Id: string;
      Expression?: string;
      ReturnData?: boolean;
      MetricStat?: {
        Metric: { Namespace: string; MetricName: string; Dimensions: { Name: string; Value: unknown }[] };
        Stat: string;
        Period: number;
      };
    }[];
  };
}

/** A metric an alarm reads, whether the alarm reads one metric or a math expression over several. */
export interface ReadMetric {
  id?: string;
  namespace?: string;
  metricName?: string;
  dimensions: Record<string, unknown>;
  stat?: string;
  period?: number;
}

/** Every alarm of the template. */
export const alarmsOf = (template: Template) => Object.values(template.findResources('AWS::CloudWatch::Alarm')) as AlarmResource[];

const dimensionsOf = (dimensions: { Name: string; Value: unknown }[] = []) => Object.fromEntries(dimensions.map(({ Name, Value }) => [Name, Value]));

export const metricsRead = ({ Properties: p }: AlarmResource): ReadMetric[] =>
  p.Metrics === undefined
    ? [
        {
          namespace: p.Namespace,
          metricName: p.MetricName,
          dimensions: dimensionsOf(p.Dimensions),
          stat: p.Statistic ?? p.ExtendedStatistic,
          period: p.Period,
        },
      ]
    : p.Metrics.flatMap(({ Id, MetricStat }) =>
        MetricStat === undefined
          ? []
          : [
              {
                id: Id,
                namespace: MetricStat.Metric.Namespace,
                metricName: MetricStat.Metric.MetricName,
                dimensions: dimensionsOf(MetricStat.Metric.Dimensions),
                stat: MetricStat.Stat,
                period: MetricStat.Period,
              },
            ],
      );

/** The expression an alarm compares with its threshold, when it reads a math expression. */
export const expressionOf = ({ Properties: p }: AlarmResource) => p.Metrics?.find(({ ReturnData }) => ReturnData !== false)?.Expression;

/** A description's text, each name that CloudFormation fills in at deploy written as `name`. */
export const textOf = (description: AlarmResource['Properties']['AlarmDescription'], name = '<name>') =>
  typeof description === 'string' ? description : description['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : name)).join('');
