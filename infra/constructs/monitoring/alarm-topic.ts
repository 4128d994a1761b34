import { ArnFormat, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';

/**
 * Where every alarm, and its return to OK, is sent: the topic `AlarmTopic` and its key
 * `AlarmTopicKey` in `scope`, with an e-mail subscription when the operator names an address.
 */
export const alarmTopic = (scope: Construct, email: string | undefined): Topic => {
  const { stackName } = Stack.of(scope);
  // A key of our own: CloudWatch cannot publish to a topic under SNS's AWS-managed key, whose
  // policy no one can change to let it use the key, and the alarms would fail silently.
  const key = new Key(scope, 'AlarmTopicKey', {
    description: `Encrypts the alarm notifications of ${stackName}.`,
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
  const topic = new Topic(scope, 'AlarmTopic', {
    displayName: `${stackName} alarms`,
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
          'aws:SourceArn': Stack.of(scope).formatArn({
            service: 'cloudwatch',
            resource: 'alarm',
            resourceName: '*',
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        },
      },
    }),
  );
  if (email !== undefined) topic.addSubscription(new EmailSubscription(email));
  return topic;
};
