import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../local/dynamodb-local';

declare module 'vitest' {
  export interface ProvidedContext {
    /** One DynamoDB Local for each of the project's workers (dynamoDbEndpoint() picks a worker's). */
    dynamoDbEndpoints: string[];
  }
}

/**
 * A DynamoDB Local for each file the project runs at once: one runs its transactions one at a time,
 * for every table, so two files sharing it wait on each other's writes, and a file of many
 * transactions made the one beside it several times slower.
 */
export default async function startDynamoDbLocals(project: TestProject) {
  // The root project runs no file: it needs none.
  const workers = project.isRootProject() ? 0 : Math.max(1, project.config.maxWorkers ?? 1);
  const locals = await Promise.all(Array.from({ length: workers }, () => startDynamoDbLocal()));
  project.provide(
    'dynamoDbEndpoints',
    locals.map(({ endpoint }) => endpoint),
  );
  return () => Promise.all(locals.map((local) => local.stop()));
}
