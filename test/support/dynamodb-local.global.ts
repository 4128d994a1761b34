import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../local/dynamodb-local';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoDbEndpoint: string;
  }
}

export default async function startSharedDynamoDbLocal(project: TestProject) {
  const dynamoDbLocal = await startDynamoDbLocal();
  project.provide('dynamoDbEndpoint', dynamoDbLocal.endpoint);
  return () => dynamoDbLocal.stop();
}
