/**
 * Stands in for `@smithy/core/event-streams` in the Lambda bundles (an esbuild alias in
 * ./bundling). The SDK's HTTP protocol imports it only to read or write an event stream, which no
 * DynamoDB operation has: its codec, about 10 KB of each bundle, never runs there. Should an
 * operation ever ask for one, it is told why it cannot have it.
 */
const absent = (): never => {
  throw new Error('Event streams are left out of this bundle (infra/no-event-streams.ts): no DynamoDB operation uses one');
};

export class EventStreamSerde {
  constructor() {
    absent();
  }
}

export const eventStreamSerdeProvider = absent;
