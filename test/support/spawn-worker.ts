/** A keel worker in a process of its own (test/support/worker-process.ts), for tests that kill it. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TEMPORAL_ADDRESS } from './keel.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface WorkerProcess {
  child: ChildProcess;
  /** Resolves once the process printed output matching `pattern`; rejects if it exits first. */
  waitFor(pattern: RegExp): Promise<void>;
}

/**
 * Starts the process; `cleanup` gets a function that kills it, for the test file's afterAll.
 * `env` adds to the process's environment.
 */
export function spawnWorker(
  taskQueue: string,
  modelServerUrl: string,
  cleanup: (() => unknown)[],
  env: Record<string, string> = {},
): WorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/worker-process.ts'], {
    cwd: root,
    env: { ...process.env, TEMPORAL_ADDRESS, KEEL_TASK_QUEUE: taskQueue, MODEL_SERVER_URL: modelServerUrl, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    for (const w of waiters.filter((w) => w.pattern.test(output))) w.resolve();
  });
  cleanup.push(() => child.kill('SIGKILL'));
  return {
    child,
    waitFor: (pattern) =>
      new Promise<void>((resolve, reject) => {
        if (pattern.test(output)) return resolve();
        waiters.push({ pattern, resolve });
        child.once('exit', (code) => reject(new Error(`worker exited (${code}) before printing ${pattern}:\n${output}`)));
      }),
  };
}
