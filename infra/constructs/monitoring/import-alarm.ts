import { Duration } from 'aws-cdk-lib';
import { ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { RaiseAlarm } from './raise-alarm';

/**
 * An execution of the state machine of imports failed: a step failed every time Step Functions ran
 * it (the store down for minutes, or a bug). Its import stays `running`, and every step it made is
 * recorded, so a redrive runs only what is left: the description says so, for the operator.
 */
export const raiseImportAlarm = (raise: RaiseAlarm, stateMachine: StateMachine, dashboardName: string): void => {
  raise('ImportExecutionsFailedAlarm', {
    alarmDescription: [
      'An import stopped: an execution of the state machine of imports failed after Step Functions ran its failed',
      'step 6 times. The import stays running, with every row it applied recorded once. First open the failed',
      'execution in the Step Functions console (its failed step names the import and the error; the ImportWorker',
      'log has the step\'s own entry), fix what failed (often the store: see TableThrottlesAlarm), then redrive the',
      `execution, which runs only its failed batches (docs/operations.md, "Imports"). Dashboard ${dashboardName}.`,
    ].join(' '),
    metric: stateMachine.metricFailed({ period: Duration.minutes(5) }),
    threshold: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    // No import, no failure.
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
};
