import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { json } from '../../functions/http/route';
import { type FunctionRoutes, MAX_CONCURRENT_INVOCATIONS, createLocalServer } from '../../local/server';

// The local server's two ways to run a function (docs/development.md, "Shared and Lambda modes"),
// over functions that report which instance served them and how many invocations it was serving.

/** A function whose instances each answer their number, how many invocations they serve at that moment, and their log stream. */
const countingInstances = () => {
  let started = 0;
  const newInstance = () => {
    const instance = ++started;
    let serving = 0;
    return async (_event: unknown, context: { logStreamName: string }) => {
      serving++;
      const atOnce = serving;
      await sleep(50);
      serving--;
      return json(200, { instance, atOnce, logStreamName: context.logStreamName });
    };
  };
  return { newInstance, started: () => started };
};

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server?.closeAllConnections();
});

const serve = async (functions: Record<string, FunctionRoutes>) => {
  server = createLocalServer(functions);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return async (count: number) =>
    Promise.all(
      Array.from({ length: count }, async () => {
        const answer = await fetch(`${baseUrl}/work`, { method: 'POST', body: '{}' });
        expect(answer.status).toBe(200);
        return (await answer.json()) as { instance: number; atOnce: number; logStreamName: string };
      }),
    );
};

describe('a function run as Lambda runs it (--lambda)', () => {
  it('serves each invocation on an instance that serves no other at once, starting one as requests overlap, and reuses them warm', async () => {
    const fn = countingInstances();
    const send = await serve({ work: { routeKeys: ['POST /work'], newInstance: fn.newInstance } });

    const overlapping = await send(8);
    const later = await send(1);

    expect(overlapping.every(({ atOnce }) => atOnce === 1)).toBe(true);
    expect(new Set(overlapping.map(({ instance }) => instance)).size).toBe(8);
    expect(new Set(overlapping.map(({ logStreamName }) => logStreamName)).size).toBe(8);
    expect(fn.started()).toBe(8);
    expect(later[0]?.instance).toBeLessThanOrEqual(8);
  });

  it(`starts at most ${MAX_CONCURRENT_INVOCATIONS} instances of a function: the requests past them wait for one to be free`, async () => {
    const fn = countingInstances();
    const send = await serve({ work: { routeKeys: ['POST /work'], newInstance: fn.newInstance } });

    const answers = await send(MAX_CONCURRENT_INVOCATIONS + 16);

    expect(fn.started()).toBe(MAX_CONCURRENT_INVOCATIONS);
    expect(answers.every(({ atOnce }) => atOnce === 1)).toBe(true);
  });
});

describe('a function run as one process serving many requests (the default)', () => {
  it('serves overlapping invocations on its one instance at once', async () => {
    const fn = countingInstances();
    const send = await serve({ work: { routeKeys: ['POST /work'], handler: fn.newInstance() } });

    const answers = await send(8);

    expect(new Set(answers.map(({ instance }) => instance))).toEqual(new Set([1]));
    expect(Math.max(...answers.map(({ atOnce }) => atOnce))).toBeGreaterThan(1);
  });
});
