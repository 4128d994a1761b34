import { PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import { type TableAccess, linesByBatchIndex } from '../../functions/store/table';

/**
 * The handler's actions on the table, and only on the items whose partition key starts with one of
 * its prefixes (`dynamodb:LeadingKeys`): the allocation handler cannot take a batch reference. Its
 * writes may name only the attributes it writes (`dynamodb:Attributes`); reads are not restricted by
 * attribute, since a Query would then have to name every attribute it reads. A handler that finds a
 * batch's lines through the index may Query it, and only it, on its own prefixes: the index's
 * partition keys are not the table's.
 */
export const grantTableAccess = (
  role: Role,
  tableArn: string,
  { reads, writes, partitionKeyPrefixes, writtenAttributes, indexPartitionKeyPrefixes }: TableAccess,
) => {
  const leadingKeys = (prefixes: readonly string[]) => ({
    'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': prefixes.map((prefix) => `${prefix}*`) },
  });
  const onItsItems = leadingKeys(partitionKeyPrefixes);
  if (reads.length > 0) {
    role.addToPrincipalPolicy(new PolicyStatement({ actions: [...reads], resources: [tableArn], conditions: onItsItems }));
  }
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...writes],
      resources: [tableArn],
      conditions: { ...onItsItems, 'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...writtenAttributes] } },
    }),
  );
  if (indexPartitionKeyPrefixes.length > 0) {
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [`${tableArn}/index/${linesByBatchIndex.name}`],
        conditions: leadingKeys(indexPartitionKeyPrefixes),
      }),
    );
  }
};
