import { PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import type { TableAccess } from '../../functions/store/table';

/**
 * The handler's reads of the table, only of the items whose partition key starts with one of its
 * read prefixes (`dynamodb:LeadingKeys`), and its writes, only of the items of its written prefixes:
 * the allocation handler cannot take a batch reference, the sweeper cannot write a batch's piece. Its
 * writes may name only the attributes it writes (`dynamodb:Attributes`); reads are not restricted by
 * attribute, since a Query would then have to name every attribute it reads. A function may Query
 * the indexes it reads, and only them, on its own prefixes: an index's partition keys are not the
 * table's.
 */
export const grantTableAccess = (
  role: Role,
  tableArn: string,
  { reads, writes, readPartitionKeyPrefixes, writtenPartitionKeyPrefixes, writtenAttributes, indexQueries }: TableAccess,
) => {
  const leadingKeys = (prefixes: readonly string[]) => ({
    'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': prefixes.map((prefix) => `${prefix}*`) },
  });
  if (reads.length > 0) {
    role.addToPrincipalPolicy(new PolicyStatement({ actions: [...reads], resources: [tableArn], conditions: leadingKeys(readPartitionKeyPrefixes) }));
  }
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...writes],
      resources: [tableArn],
      conditions: { ...leadingKeys(writtenPartitionKeyPrefixes), 'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...writtenAttributes] } },
    }),
  );
  for (const { index, partitionKeyPrefixes: indexPrefixes } of indexQueries) {
    role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['dynamodb:Query'], resources: [`${tableArn}/index/${index}`], conditions: leadingKeys(indexPrefixes) }),
    );
  }
};
