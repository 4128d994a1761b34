import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createBatchesHandler } from '../../functions/batches';
import { type HttpEvent, json } from '../../functions/http/route';
import { routeKeys } from '../../functions/http/route-keys';
import type { InstanceStart } from '../../local/function-instances';
import { type FunctionRoutes, type LambdaHttpHandler, MAX_CONCURRENT_INVOCATIONS, type ServerLog, createLocalServer } from '../../local/server';
import { FakeRepository } from '../support/fake-repository';
import { captureTelemetry } from '../support/telemetry';

// The local server's two ways to run a function (docs/development.md, "Shared and Lambda modes"),
// over functions that report which instance served them and how many invocations it was serving.
// Each invocation waits at a gate the test opens once the invocations it means to overlap have all
// started: nothing depends on how fast the machine is.

/** A function whose instances each answer their number and how many invocations they were serving at once. */
const gatedInstances = () => {
  let started = 0;
  let running = 0;
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  const newInstance = () => {
    const instance = ++started;
    let serving = 0;
    return async () => {
      serving++;
      running++;
      const atOnce = serving;
      await gate;
      serving--;
      running--;
      return json(200, { instance, atOnce });
    };
  };
  /** Opens the gate once `count` invocations wait at it. */
  const openWhenRunning = async (count: number) => {
    while (running < count) await sleep(5);
    open();
  };
  return { newInstance, started: () => started, running: () => running, openWhenRunning };
};

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server?.closeAllConnections();
});

/** The server's base URL, once it listens. */
const listen = async (functions: Record<string, FunctionRoutes>, log?: ServerLog) => {
  server = createLocalServer(functions, log);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

const serve = async (functions: Record<string, FunctionRoutes>) => {
  const baseUrl = await listen(functions);
  return (count: number) =>
    Promise.all(
      Array.from({ length: count }, async () => {
        const answer = await fetch(`${baseUrl}/work`, { method: 'POST', body: '{}' });
        return { status: answer.status, ...((await answer.json()) as { instance: number; atOnce: number }) };
      }),
    );
};

describe('a function run as Lambda runs it (--lambda)', () => {
  it('serves each invocation on an instance that serves no other at once, starting one as requests overlap, and reuses them warm', async () => {
    const fn = gatedInstances();
    const send = await serve({ work: { routeKeys: ['POST /work'], newInstance: fn.newInstance } });

    const overlapping = send(8);
    await fn.openWhenRunning(8);
    const answers = await overlapping;
    const later = await send(1);

    expect(answers.every(({ atOnce }) => atOnce === 1)).toBe(true);
    expect(new Set(answers.map(({ instance }) => instance)).size).toBe(8);
    expect(fn.started()).toBe(8);
    expect(later[0]?.instance).toBeLessThanOrEqual(8);
  });

  it(`starts at most ${MAX_CONCURRENT_INVOCATIONS} instances of a function: the requests past them wait for one to be free`, async () => {
    const fn = gatedInstances();
    const send = await serve({ work: { routeKeys: ['POST /work'], newInstance: fn.newInstance } });

    const all = send(MAX_CONCURRENT_INVOCATIONS + 16);
    while (fn.running() < MAX_CONCURRENT_INVOCATIONS) await sleep(5);
    // Were there no cap, the 16 others would start instances of their own meanwhile.
    await sleep(200);
    expect(fn.started()).toBe(MAX_CONCURRENT_INVOCATIONS);
    await fn.openWhenRunning(MAX_CONCURRENT_INVOCATIONS);
    const answers = await all;

    expect(answers.map(({ status }) => status)).toEqual(answers.map(() => 200));
    expect(fn.started()).toBe(MAX_CONCURRENT_INVOCATIONS);
    expect(answers.every(({ atOnce }) => atOnce === 1)).toBe(true);
  });

  it(`counts no instance that failed to start, however many (${MAX_CONCURRENT_INVOCATIONS}), and reuses an instance whose invocation threw`, async () => {
    let attempts = 0;
    const send = await serve({
      work: {
        routeKeys: ['POST /work'],
        newInstance: () => {
          if (++attempts <= MAX_CONCURRENT_INVOCATIONS) throw new Error('the instance failed to start');
          return async () => {
            throw new Error('the function broke');
          };
        },
      },
    });

    for (let failed = 0; failed < MAX_CONCURRENT_INVOCATIONS; failed++) expect((await send(1))[0]?.status).toBe(500);
    expect((await send(1))[0]?.status).toBe(500);
    expect((await send(1))[0]?.status).toBe(500);
    expect(attempts).toBe(MAX_CONCURRENT_INVOCATIONS + 1);
  });
});

describe('a function run as one process serving many requests (the default)', () => {
  it('serves overlapping invocations on its one instance at once', async () => {
    const fn = gatedInstances();
    const send = await serve({ work: { routeKeys: ['POST /work'], handler: fn.newInstance() } });

    const overlapping = send(8);
    await fn.openWhenRunning(8);
    const answers = await overlapping;

    expect(new Set(answers.map(({ instance }) => instance))).toEqual(new Set([1]));
    expect(Math.max(...answers.map(({ atOnce }) => atOnce))).toBe(8);
  });
});

describe('cold starts as Lambda logs them (--lambda)', () => {
  /** The batches function, its invocations held at a gate while the test holds it, after they count themselves running. */
  const heldBatches = () => {
    let running = 0;
    let gate: Promise<void> | undefined;
    const newInstance = (): LambdaHttpHandler => {
      const handler = createBatchesHandler(new FakeRepository());
      return async (event: HttpEvent, context) => {
        running++;
        await gate;
        running--;
        return handler(event, context);
      };
    };
    const hold = () => {
      let open: () => void = () => {};
      gate = new Promise<void>((resolve) => (open = resolve));
      /** Opens the gate once `count` invocations wait at it. */
      return async (count: number) => {
        while (running < count) await sleep(5);
        gate = undefined;
        open();
      };
    };
    return { newInstance, hold };
  };

  it("logs cold_start true for each instance's first invocation and false for its later ones, one true an instance however many start at once beside a warm one", async () => {
    const telemetry = captureTelemetry();
    try {
      const batches = heldBatches();
      const started: InstanceStart[] = [];
      const baseUrl = await listen(
        { batches: { routeKeys: routeKeys.batches, newInstance: batches.newInstance } },
        { instanceStarted: (instance) => started.push(instance) },
      );
      const read = async (count: number) => {
        const answers = await Promise.all(Array.from({ length: count }, () => fetch(`${baseUrl}/batches/none`)));
        expect(answers.map(({ status }) => status)).toEqual(answers.map(() => 404));
        const coldStarts = telemetry.requests().map((entry) => entry.cold_start);
        telemetry.clear();
        return coldStarts;
      };

      expect(await read(1)).toEqual([true]);
      const open = batches.hold();
      const overlapping = read(6);
      await open(6);
      // One on the warm instance, five on instances started for them.
      expect((await overlapping).sort()).toEqual([false, true, true, true, true, true]);
      for (let later = 0; later < 6; later++) expect(await read(1)).toEqual([false]);

      expect(started).toHaveLength(6);
      expect(started.every(({ functionName, initDurationMs }) => functionName === 'local-batches' && initDurationMs >= 0)).toBe(true);
    } finally {
      telemetry.restore();
    }
  });
});
