import { PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import type { TableAccess } from '../../functions/store/table';

/**
 * The handler's actions on the table, and only on the items whose partition key starts with one of
 * its prefixes (`dynamodb:LeadingKeys`): the allocation handler cannot take a batch reference. Its
 * writes may name only the attributes it writes (`dynamodb:Attributes`); reads are not restricted by
 * attribute, since a Query would then have to name every attribute it reads. A function may Query
 * the indexes it reads, and only them, on its own prefixes: an index's partition keys are not the
 * table's.
 */
export const grantTableAccess = (
  role: Role,
  tableArn: string,
  { reads, writes, partitionKeyPrefixes, writtenAttributes, indexQueries }: TableAccess,
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
  for (const { index, partitionKeyPrefixes: indexPrefixes } of indexQueries) {
    role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['dynamodb:Query'], resources: [`${tableArn}/index/${index}`], conditions: leadingKeys(indexPrefixes) }),
    );
  }
};
