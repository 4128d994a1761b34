import { Duration } from 'aws-cdk-lib';
import { ComparisonOperator, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { OVERDUE_AFTER_MS } from '../../../domain/hold-services';
import { SWEEP_HOLDS_OPERATION, metricNames } from '../../../functions/telemetry-names';
import { serviceMetric } from './metrics';
import type { RaiseAlarm } from './raise-alarm';

/**
 * The sweeper has fallen behind: holds still active 5 minutes after they expired (HoldsOverdue,
 * which each sweep publishes, 0 included), or no sweep reported at all (a schedule or a function
 * that stopped: missing data breaches). Sales never wait on the sweeper, so this is about records
 * and events, not stock: the description says so, for the operator.
 */
export const raiseSweeperAlarm = (raise: RaiseAlarm, sweeper: NodejsFunction, dashboardName: string): void => {
  raise('SweepHoldsBehindAlarm', {
    alarmDescription: [
      `The hold sweeper is behind: holds are still active ${OVERDUE_AFTER_MS / 60_000} minutes after they expired, or`,
      `${sweeper.functionName} reported no sweep for 5 minutes. No sale waits on it (an expired hold's units are free the`,
      'moment it expires), but HoldReleased events of reason expired are late. First read its log (Logs Insights,',
      `${sweeper.logGroup.logGroupName}: filter message = "Hold sweep failed" or overdue > 0), then check that the rule`,
      `SweepHoldsSchedule is enabled and the function is not throttled. Dashboard ${dashboardName}, "Holds".`,
    ].join(' '),
    metric: serviceMetric(metricNames.holdsOverdue, SWEEP_HOLDS_OPERATION).with({ statistic: Stats.MINIMUM, period: Duration.minutes(5) }),
    threshold: 0,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.BREACHING,
  });
};
