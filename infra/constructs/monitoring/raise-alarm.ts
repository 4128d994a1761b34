import type { AlarmProps } from 'aws-cdk-lib/aws-cloudwatch';

/** Creates the alarm `id`, which notifies the alarm topic when it goes off and when it is over. */
export type RaiseAlarm = (id: string, props: AlarmProps) => void;
