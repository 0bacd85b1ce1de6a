/**
 * keel as a user gets it: `npm pack`ed (dist/ is built by the tests' globalSetup), installed from
 * the tarball with zod into a scratch project outside the repo, and run there with plain `node`:
 * no tsx, no vitest, no TypeScript sources. The user's files are in test/fixtures/consumer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand, type CliResult } from './support/cli.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const fixtures = fileURLToPath(new URL('./fixtures/consumer', import.meta.url));
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const node = process.execPath;
const ADDRESS = `127.0.0.1:${process.env.KEEL_TEST_TEMPORAL_PORT ?? '7433'}`;

/**
 * The scratch project's environment: none of the repo's npm, Temporal or keel settings (under
 * `npm test`, npm_config_* would point npm at the repo), this node first on PATH, no colors.
 */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|TEMPORAL_|KEEL_|VITEST)/i.test(key)) continue;
    if (['INIT_CWD', 'NODE_OPTIONS', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'FORCE_COLOR'].includes(key)) continue;
    env[key] = value;
  }
  const path = [dirname(process.execPath), env.PATH ?? ''].join(delimiter);
  return { ...env, PATH: path, TEMPORAL_ADDRESS: ADDRESS, NO_COLOR: '1', ...extra };
}

type Exit = CliResult;

function exec(command: string, args: string[], options: { cwd: string; env?: Record<string, string>; timeoutMs?: number }): Promise<Exit> {
  return runCommand(command, args, { cwd: options.cwd, env: userEnv(options.env), timeoutMs: options.timeoutMs ?? 120_000 });
}

/** Like exec, but a non-zero exit is an error that shows the output. */
async function check(command: string, args: string[], options: Parameters<typeof exec>[2]): Promise<string> {
  const result = await exec(command, args, options);
  if (result.code !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.code}.\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
  }
  return result.stdout;
}

/** The last line of a script's stdout, as JSON (Temporal's worker logs go to stderr). */
function lastJson<T>(stdout: string): T {
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as T;
}

interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

const workers = new Set<ChildProcess>();

/** A `keel worker` of the scratch project, resolved once it says it polls. */
function startWorker(command: string, args: string[], cwd: string): Promise<WorkerProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: userEnv() });
    workers.add(child);
    let output = '';
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    void exited.then(() => workers.delete(child));
    const timer = setTimeout(() => reject(new Error(`keel worker did not get ready.\n${output}`)), 120_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready: polling')) {
        clearTimeout(timer);
        resolve({ child, output: () => output, exited });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('error', reject);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`keel worker exited (${code}) before it got ready.\n${output}`));
    });
  });
}

const uniqueQueue = (name: string) => `package-${name}-${randomUUID().slice(0, 8)}`;

interface RunResult {
  status: string;
  output: string;
  turns: number;
  agent: string;
}

describe('keel installed from its tarball, in a project of its own', () => {
  let scratch: string;
  let app: string;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'keel-package-'));
    app = join(scratch, 'app');
    // --ignore-scripts: prepack would clean dist/, which the CLI tests may be running meanwhile.
    const packed = await check('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', scratch], { cwd: root });
    const tarball = join(scratch, (JSON.parse(packed) as { filename: string }[])[0]!.filename);

    await mkdir(app);
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'keel-user', private: true, type: 'module' }, null, 2));
    await cp(fixtures, app, { recursive: true });
    // The repo's own ranges, so npm finds them in its cache; tsx and @types/node are what a
    // TypeScript user brings (the loader for agents.ts, Node's types for tsc).
    const repo = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    const dev = (name: string) => `${name}@${repo.devDependencies[name]}`;
    await check(
      'npm',
      ['install', tarball, dev('zod'), dev('tsx'), dev('@types/node'), '--prefer-offline', '--no-audit', '--no-fund'],
      { cwd: app, timeoutMs: 280_000 },
    );
  }, 300_000);

  afterAll(async () => {
    for (const child of workers) child.kill('SIGKILL');
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('runs an agent with a tool from a plain-node script: createWorker, runUntil, AgentClient', async () => {
    // It exits by itself: runUntil stops the worker and closes the connection it opened.
    const stdout = await check(node, ['run-agent.mjs'], { cwd: app, env: { KEEL_TASK_QUEUE: uniqueQueue('script') } });
    const result = lastJson<RunResult>(stdout);
    expect(result).toMatchObject({ status: 'completed', agent: 'census', turns: 2 });
    // The demo model called the tool once per city and gathered its results.
    expect(result.output).toContain('Lisbon — population: 545000 people');
    expect(result.output).toContain('Oslo — population: 709000 people');
  }, 120_000);

  it('keel/client loads no @temporalio/worker (keel does: the check sees it)', async () => {
    const [client, full] = await Promise.all([
      check(node, ['loaded-modules.mjs', 'keel/client'], { cwd: app }),
      check(node, ['loaded-modules.mjs', 'keel'], { cwd: app }),
    ]);
    expect(lastJson<{ workerFiles: number }>(client).workerFiles).toBe(0);
    expect(lastJson<{ workerFiles: number }>(full).workerFiles).toBeGreaterThan(0);
  });

  it('type-checks a TypeScript user of keel, keel/client and keel/workflows (module nodenext)', async () => {
    const result = await exec(node, [tsc, '-p', 'tsconfig.json'], { cwd: app });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.code).toBe(0);
  }, 90_000);

  /** Runs `agent` on a worker's task queue from a client-only process; then stops the worker with SIGINT. */
  async function runAgainst(worker: WorkerProcess, taskQueue: string, agent: string, prompt: string): Promise<RunResult> {
    try {
      const stdout = await check(node, ['run-client.mjs', agent, prompt], { cwd: app, env: { KEEL_TASK_QUEUE: taskQueue } });
      const { result, workerLoaded } = lastJson<{ result: RunResult; workerLoaded: boolean }>(stdout);
      expect(workerLoaded).toBe(false);
      return result;
    } finally {
      worker.child.kill('SIGINT');
      expect(await worker.exited).toBe(0);
      expect(worker.output()).toContain('Worker stopped.');
    }
  }

  it('keel worker --agents ./agents.js serves a JavaScript module of agents', async () => {
    const taskQueue = uniqueQueue('js');
    const worker = await startWorker(join(app, 'node_modules', '.bin', 'keel'), ['worker', '--agents', './agents.js', '--task-queue', taskQueue], app);
    expect(worker.output()).toMatch(/letters\s+demo:letters/);
    const result = await runAgainst(worker, taskQueue, 'letters', 'How many letters are in Temporal and Keel?');
    expect(result).toMatchObject({ status: 'completed', agent: 'letters', turns: 2 });
    expect(result.output).toContain('Temporal — count letters: 8 letters');
    expect(result.output).toContain('Keel — count letters: 4 letters');
  }, 120_000);

  it('keel worker --agents ./agents.ts says what to do without a loader, and serves it with one', async () => {
    const bare = await exec(join(app, 'node_modules', '.bin', 'keel'), ['worker', '--agents', './agents.ts'], { cwd: app });
    expect(bare.code).toBe(1);
    expect(bare.stderr).toContain('Cannot load agents from ./agents.ts: Node runs no TypeScript by itself');
    expect(bare.stderr).toContain('node --import tsx node_modules/.bin/keel worker --agents ./agents.ts');
    expect(bare.stderr).not.toMatch(/^\s+at /m);

    const taskQueue = uniqueQueue('ts');
    const worker = await startWorker(
      node,
      ['--import', 'tsx', 'node_modules/.bin/keel', 'worker', '--agents', './agents.ts', '--task-queue', taskQueue],
      app,
    );
    const result = await runAgainst(worker, taskQueue, 'shouter', 'Please shout Ada and Linus');
    expect(result).toMatchObject({ status: 'completed', agent: 'shouter', turns: 2 });
    expect(result.output).toContain('Ada — shout: ADA!');
    expect(result.output).toContain('Linus — shout: LINUS!');
  }, 120_000);
});
