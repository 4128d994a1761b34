import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import type { HttpEvent, HttpResult } from '../functions/http/route';
import { FUNCTION_TIMEOUT_SECONDS } from '../functions/http/time-budget';
import { type ColdStart, findColdStartsBy } from '../functions/telemetry';

/*
 * The Lambda functions the local server stands in for: how an invocation reaches an instance of
 * one, in either mode (docs/development.md, "Shared and Lambda modes"), and the context it is given.
 */

export type LambdaHttpHandler = (event: HttpEvent, context: Context) => Promise<HttpResult>;

/**
 * A Lambda function to stand in for, and the route keys (e.g. `GET /batches/{ref}`) API Gateway sends
 * it: either one `handler` that serves many invocations at once, as a process in a container does
 * (what one request remembers, the next one knows), or `newInstance`, which builds the function anew
 * as Lambda starts an instance: each serves one invocation at a time, with module state of its own
 * (docs/development.md, "Shared and Lambda modes").
 */
export type FunctionRoutes = { readonly routeKeys: readonly string[] } & (
  | { readonly handler: LambdaHttpHandler; readonly newInstance?: never }
  | { readonly newInstance: () => LambdaHttpHandler; readonly handler?: never }
);

/**
 * Invocations that run at once: in the shared mode, of all the functions together; in the Lambda
 * mode, of each function, one an instance. Later requests wait their turn, as they would for a free
 * Lambda instance. On AWS each instance runs one invocation with a client of its own. In the shared
 * mode all share one client: a burst of hundreds would queue its calls behind the client's 50
 * sockets, or pile them on DynamoDB Local, until they outwaited the client's timeouts and a store
 * that keeps up answered 503.
 * Not fewer: through the conflict model a transaction holds its items 100 ms, and 16 at once would
 * cap a hot SKU at 160 allocations/s whatever its spread did (docs/reliability.md).
 */
export const MAX_CONCURRENT_INVOCATIONS = 64;

/** As the CDK stack configures each function. */
const FUNCTION_MEMORY_MB = 512;
export const LOCAL_ACCOUNT_ID = '000000000000';
const LOCAL_REGION = process.env.AWS_REGION ?? 'us-east-1';

/** An instance started for the invocation waiting on it (the Lambda mode), as Lambda's init report tells of one. */
export interface InstanceStart {
  readonly functionName: string;
  /**
   * How long `newInstance` took to build the instance's module state (its client, repository and
   * handler). The modules themselves load once for the whole process, so this is no Lambda init's
   * time: it leaves out what a cold start spends loading and compiling the bundle.
   */
  readonly initDurationMs: number;
}

/** A Lambda function behind its routes, as this process stands in for it: how an invocation reaches one of its instances. */
export interface LocalFunction {
  /** `instanceStarted` hears of the instance the invocation had to start, before the invocation runs there. */
  readonly invoke: (event: HttpEvent, instanceStarted?: (start: InstanceStart) => void) => Promise<HttpResult>;
}

/** An instance of a function: its handler, and the log stream its invocations write to, one per instance as on Lambda. */
interface LocalInstance {
  readonly handler: LambdaHttpHandler;
  readonly functionName: string;
  readonly logStreamName: string;
}

/** An instance of the Lambda mode, with the cold start its first invocation logs. */
interface LambdaInstance extends LocalInstance {
  readonly coldStart: ColdStart;
}

/**
 * The cold start of each invocation that runs on an instance whose cold start is still pending,
 * for the functions' telemetry to take (functions/telemetry.ts, `takeColdStart`): the instances
 * share its module, and so would share one cold start. Only those invocations run in it, and it is
 * disabled whenever none runs: while it is enabled, every promise in the process carries its
 * context (Node 22), a cost that warm invocations, and the figures `npm run bench` takes of them,
 * would otherwise pay for the process's life.
 */
const startingInvocations = new AsyncLocalStorage<ColdStart>();
let startingInFlight = 0;
findColdStartsBy(() => startingInvocations.getStore());

const runStarting = async <T>(coldStart: ColdStart, invocation: () => Promise<T>): Promise<T> => {
  startingInFlight++;
  try {
    return await startingInvocations.run(coldStart, invocation);
  } finally {
    startingInFlight--;
    if (startingInFlight === 0) startingInvocations.disable();
  }
};

/** Runs at most `limit` tasks at a time; the others start in the order they came, as slots free up. */
export const limitConcurrency = (limit: number) => {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running < limit) running++;
    // A finishing task hands its slot straight to the next waiter, so `running` stays the same.
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
};

const localInstance = (name: string, handler: LambdaHttpHandler): LocalInstance => {
  const startedOn = new Date().toISOString().slice(0, 10).replaceAll('-', '/');
  return { handler, functionName: `local-${name}`, logStreamName: `${startedOn}/[$LATEST]${randomBytes(16).toString('hex')}` };
};

/** One instance for the process's life, serving as many invocations at once as the server's slots allow. */
export const sharedFunction = (name: string, handler: LambdaHttpHandler, slots: ReturnType<typeof limitConcurrency>): LocalFunction => {
  const instance = localInstance(name, handler);
  return { invoke: (event) => slots(() => instance.handler(event, invocationContext(instance))) };
};

/**
 * As Lambda serves a function: an invocation goes to an idle instance, the one used last, or, while
 * every instance is busy, to a new one (its module state built anew by `newInstance`), up to
 * MAX_CONCURRENT_INVOCATIONS instances; past that, it waits for the first to be free.
 */
export const lambdaFunction = (name: string, newInstance: () => LambdaHttpHandler): LocalFunction => {
  const idle: LambdaInstance[] = [];
  const waiting: Array<(instance: LambdaInstance) => void> = [];
  let started = 0;
  /** An idle instance, or a new one and how it started; one that is busy, once it is free. */
  const acquire = async (): Promise<{ instance: LambdaInstance; start?: InstanceStart }> => {
    const warm = idle.pop();
    if (warm) return { instance: warm };
    if (started < MAX_CONCURRENT_INVOCATIONS) {
      started++;
      const initStartedAt = performance.now();
      let handler: LambdaHttpHandler;
      try {
        handler = newInstance();
      } catch (error) {
        // An instance that failed to start is none: the next request starts another.
        started--;
        throw error;
      }
      const instance = { ...localInstance(name, handler), coldStart: { pending: true } };
      return { instance, start: { functionName: instance.functionName, initDurationMs: performance.now() - initStartedAt } };
    }
    return { instance: await new Promise<LambdaInstance>((resolve) => waiting.push(resolve)) };
  };
  const release = (instance: LambdaInstance) => {
    const next = waiting.shift();
    if (next) next(instance);
    else idle.push(instance);
  };
  return {
    invoke: async (event, instanceStarted) => {
      const { instance, start } = await acquire();
      try {
        // Heard inside the invocation's try: an observer that throws still gives the instance back.
        if (start) instanceStarted?.(start);
        const invocation = () => instance.handler(event, invocationContext(instance));
        return await (instance.coldStart.pending ? runStarting(instance.coldStart, invocation) : invocation());
      } finally {
        release(instance);
      }
    },
  };
};

/**
 * Lambda's context for one invocation, its clock started now: when the invocation has a slot, as
 * Lambda's starts when an instance takes it. middy arms its early timeout only when
 * `getRemainingTimeInMillis` is there, so locally it fires as on Lambda.
 */
const invocationContext = ({ functionName, logStreamName }: LocalInstance): Context => {
  const deadline = performance.now() + FUNCTION_TIMEOUT_SECONDS * 1000;
  const context: Omit<Context, 'done' | 'fail' | 'succeed'> = {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}:function:${functionName}`,
    memoryLimitInMB: String(FUNCTION_MEMORY_MB),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName,
    getRemainingTimeInMillis: () => Math.max(0, Math.floor(deadline - performance.now())),
  };
  // The callback-era methods are left out: the handlers are async and never call them.
  return context as Context;
};
