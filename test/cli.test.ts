/**
 * The `keel` CLI, run as a child process against the tests' dev server (started by globalSetup).
 * Each test uses a task queue of its own, so its runs never meet another file's workers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADDRESS, BIN, cliEnv, keel } from './support/cli.js';
import { until } from './support/until.js';
import { describeDemoModel, uiUrlFor } from '../src/client/cli/commands.js';
import { DEFAULT_TASK_QUEUE as CLI_DEFAULT_TASK_QUEUE } from '../src/client/cli/common.js';
import {
  colorEnabled,
  createStyle,
  formatEvent,
  formatLogEntry,
  formatRunList,
  formatStatus,
  formatTable,
  formatTranscript,
  shortJson,
  stripAnsi,
  type FollowContext,
} from '../src/client/cli/format.js';
import { oneLine } from '../src/core/text.js';
import type { RunEvent } from '../src/core/run.js';
import { DEFAULT_TASK_QUEUE } from '../src/workflows/api.js';

const root = fileURLToPath(new URL('..', import.meta.url));
/** A `keel worker` child process, resolved once it polls. */
function startWorker(args: string[]): Promise<{ child: ChildProcess; output: () => string; exited: Promise<number | null> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'worker', ...args], { cwd: root, env: cliEnv() });
    let stdout = '';
    let stderr = '';
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const timer = setTimeout(() => reject(new Error(`keel worker did not get ready.\n${stdout}\n${stderr}`)), 90_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('Ready: polling')) {
        clearTimeout(timer);
        resolve({ child, output: () => stdout + stderr, exited });
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`keel worker exited (${code}) before it got ready.\n${stdout}\n${stderr}`));
    });
  });
}

const uniqueQueue = (name: string) => `cli-${name}-${randomUUID().slice(0, 8)}`;

/**
 * The demo agent ends by sending a postcard, which needs approval: a run followed without a
 * terminal waits for it. This approves it from another `keel` process as soon as it waits.
 */
async function approvePostcard(workflowId: string): Promise<void> {
  const approved = await until(() => keel(['approve', workflowId, 'demo_postcard']), (r) => r.code === 0, {
    what: `the postcard of ${workflowId} to wait for approval`,
    timeoutMs: 45_000,
    intervalMs: 250,
  });
  // A call of the current turn may be decided before it reaches its wait (the run accepts it early):
  // then the CLI does not know the tool's name yet and names the call alone.
  expect(approved.stdout).toMatch(/allowed (send_postcard \(call demo_postcard\)|call demo_postcard)/);
}

describe('keel --help', () => {
  it('lists the commands, the global options and examples', async () => {
    const { code, stdout } = await keel(['--help']);
    expect(code).toBe(0);
    for (const command of ['worker', 'run', 'status', 'state', 'show', 'list', 'tree', 'demo', 'pending', 'approve', 'deny', 'mode']) {
      expect(stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    }
    for (const option of ['--address', '--namespace', '--profile']) expect(stdout).toContain(option);
    expect(stdout).toContain('Examples:');
  });

  it('gives every command a help with an example', async () => {
    for (const command of ['worker', 'run', 'status', 'state', 'show', 'list', 'tree', 'demo', 'pending', 'approve', 'deny', 'mode']) {
      const { code, stdout } = await keel([command, '--help']);
      expect(code).toBe(0);
      expect(stdout).toContain(`Usage: keel ${command}`);
      expect(stdout).toMatch(/Examples:\n {2}\$ keel /);
    }
    const run = await keel(['run', '--help']);
    for (const option of ['--id', '--detach', '--json', '--no-input', '--task-queue']) expect(run.stdout).toContain(option);
    expect(run.stdout).toMatch(/3 when a guardrail blocks it/);
    const approve = await keel(['approve', '--help']);
    for (const option of ['--all', '--edit', '--remember', '--reason', '--signal']) expect(approve.stdout).toContain(option);
  });
});

describe('an unreachable server', () => {
  const unreachable = { TEMPORAL_ADDRESS: '127.0.0.1:1' };

  it('is a clear message and exit code 1, without a stack trace (client commands)', async () => {
    const { code, stdout, stderr } = await keel(['list'], { env: unreachable });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain('Cannot reach the Temporal server at 127.0.0.1:1');
    expect(stderr).toContain('./temporal-dev.sh start');
    expect(stderr).not.toMatch(/^\s+at /m);
  });

  it('is a clear message and exit code 1 for the worker too', async () => {
    const { code, stderr } = await keel(['worker', '--task-queue', uniqueQueue('down')], { env: unreachable });
    expect(code).toBe(1);
    expect(stderr).toContain('Cannot reach the Temporal server at 127.0.0.1:1');
    expect(stderr).toContain('./temporal-dev.sh start');
    expect(stderr).not.toMatch(/^\s+at /m);
  });
});

// `keel demo` (npm start) is tested in demo.test.ts.

describe('keel worker, run, status, show, list', () => {
  const taskQueue = uniqueQueue('worker');
  const workflowId = `cli-test-${randomUUID().slice(0, 8)}`;
  const prompt = "What's the weather and the local time in Lisbon and Tokyo?";
  let worker: Awaited<ReturnType<typeof startWorker>> | undefined;

  beforeAll(async () => {
    // bin/keel.js runs compiled code with plain node: it loads agents compiled too (TypeScript
    // agents take the user's loader; test/package.test.ts tries both).
    worker = await startWorker(['--agents', 'dist/examples/demo.js', '--task-queue', taskQueue]);
  });
  afterAll(async () => {
    if (worker && worker.child.exitCode === null && worker.child.signalCode === null) {
      worker.child.kill('SIGKILL');
      await worker.exited;
    }
  });

  it('says what the worker serves', () => {
    const output = worker?.output() ?? '';
    expect(output).toMatch(/demo\s+demo:travel/);
    expect(output).toContain(`task queue ${taskQueue}`);
    expect(output).toContain(`server ${ADDRESS}`);
  });

  it('keel run --json prints the events as JSON lines and the result as JSON', async () => {
    const running = keel(['run', 'demo', prompt, '--json', '--id', workflowId, '--task-queue', taskQueue]);
    await approvePostcard(workflowId);
    const { code, stdout, stderr } = await running;
    expect(code).toBe(0);
    // stdout holds only JSON; how to decide the waiting call went to stderr.
    expect(stderr).toContain(`keel approve ${workflowId} demo_postcard`);
    const lines = stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; [key: string]: unknown });
    const types = lines.map((l) => l.type);
    expect(types[0]).toBe('run.started');
    expect(types.filter((t) => t === 'tool.requested')).toHaveLength(5);
    expect(types.filter((t) => t === 'tool.finished')).toHaveLength(5);
    expect(lines.find((l) => l.type === 'approval.requested')).toMatchObject({ callId: 'demo_postcard', tool: 'send_postcard', stage: 'tool' });
    expect(lines.find((l) => l.type === 'approval.decided')).toMatchObject({ callId: 'demo_postcard', decision: 'allow', by: 'update' });
    expect(types.at(-2)).toBe('run.finished');
    const result = lines.at(-1);
    expect(result).toMatchObject({ type: 'result', workflowId, status: 'completed', agent: 'demo', turns: 3 });
    expect(String(result?.output)).toMatch(/Lisbon[\s\S]*Tokyo/);
    expect(String(result?.uiUrl)).toContain(`/workflows/${workflowId}`);
  });

  it('keel status shows the run (the status query, answered by the worker)', async () => {
    const { code, stdout } = await keel(['status', workflowId]);
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`workflow\\s+${workflowId}`));
    expect(stdout).toMatch(/agent\s+demo/);
    expect(stdout).toMatch(/status\s+completed/);
    expect(stdout).toMatch(/turns\s+3/);
    expect(stdout).toMatch(/usage\s+\d+ input \+ \d+ output tokens/);
    expect(stdout).toMatch(/started\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
    expect(stdout).not.toContain('Waiting for approval');

    const json = await keel(['status', workflowId, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ workflowId, agent: 'demo', status: 'completed', state: { turns: 3 } });
  });

  it('keel show prints the transcript', async () => {
    const { code, stdout } = await keel(['show', workflowId]);
    expect(code).toBe(0);
    expect(stdout).toContain(`user       ${prompt}`);
    expect(stdout).toContain('assistant  (calls 4 tools)');
    expect(stdout).toContain('→ get_weather {"city":"Lisbon"}');
    expect(stdout).toMatch(/tool {7}← get_local_time \d\d:\d\d \(UTC\+9\)/);
    expect(stdout).toContain('assistant  One more step, which needs your approval: send_postcard.');
    expect(stdout).toMatch(/→ send_postcard \{"message":"Greetings from your travel helper!/);
    expect(stdout).toMatch(/tool {7}← send_postcard Postcard sent: “Greetings/);
    expect(stdout).toMatch(/assistant {2}Here is what I found:[\s\S]*Lisbon[\s\S]*Tokyo[\s\S]*send postcard: Postcard sent/);
  });

  it('keel list shows the run', async () => {
    // Visibility is eventually consistent: give it a moment.
    const { stdout } = await until(() => keel(['list', '--agent', 'demo', '--limit', '50']), (r) => r.stdout.includes(workflowId), {
      what: 'the run in keel list',
      intervalMs: 500,
    });
    expect(stdout).toMatch(/^WORKFLOW ID\s+AGENT\s+STATUS\s+STARTED$/m);
    expect(stdout).toMatch(new RegExp(`^${workflowId}\\s+demo\\s+completed\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d$`, 'm'));
  });

  it('keel run follows a run live, in lines a person reads; without a terminal it prints how to decide and waits', async () => {
    const id = `cli-live-${randomUUID().slice(0, 8)}`;
    const running = keel(['run', 'demo', 'Weather in Atlantis?', '--id', id, '--task-queue', taskQueue]);
    await approvePostcard(id);
    const { code, stdout } = await running;
    expect(code).toBe(0);
    expect(stdout).toContain('turn 1 · demo:travel');
    expect(stdout).toContain('→ get_weather {"city":"Atlantis"}');
    expect(stdout).toMatch(/✗ get_weather .*no data for "Atlantis"/);
    expect(stdout).toContain('? send_postcard waits for approval (call demo_postcard) · tool: send_postcard requires approval');
    expect(stdout).toContain('⏸ The run waits for a decision on send_postcard (call demo_postcard). Decide with:');
    expect(stdout).toContain(`      keel approve ${id} demo_postcard\n      keel deny ${id} demo_postcard --reason "..."`);
    expect(stdout).toContain('✓ send_postcard allowed by an Update');
    expect(stdout).toMatch(/← send_postcard Postcard sent: “Greetings from your travel helper! no news from Atlantis/);
    // The run streams: the answer's text was printed as it came, after the postcard, and not again under "Answer".
    expect(stdout.slice(stdout.indexOf('← send_postcard'))).toMatch(/\n {2}\S.*Atlantis/);
    expect(stdout).not.toMatch(/^Answer$/m);
    expect(stdout).toContain(`Temporal UI: http://localhost:${Number(ADDRESS.split(':')[1]) + 1000}/namespaces/default/workflows/${id}`);
  });

  it('keel run --no-stream follows by query and prints the answer at the end', async () => {
    const id = `cli-nostream-${randomUUID().slice(0, 8)}`;
    const running = keel(['run', 'demo', 'Weather in Atlantis?', '--no-stream', '--id', id, '--task-queue', taskQueue]);
    await approvePostcard(id);
    const { code, stdout } = await running;
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Answer\n[\s\S]*Atlantis/m);
  });

  it('keel run --detach prints the workflow ID and the UI link, and returns', async () => {
    const id = `cli-detach-${randomUUID().slice(0, 8)}`;
    const { code, stdout } = await keel(['run', 'demo', 'Weather in Paris?', '--detach', '--id', id, '--task-queue', taskQueue]);
    expect(code).toBe(0);
    expect(stdout.split('\n')[0]).toBe(id);
    expect(stdout).toContain(`/namespaces/default/workflows/${id}`);
    // The worker finishes it, once its postcard is approved.
    await approvePostcard(id);
    const status = await until(() => keel(['status', id]), (r) => /status\s+completed/.test(r.stdout), { what: 'keel status to say completed', intervalMs: 250 });
    expect(status.stdout).toMatch(/status\s+completed/);
  });

  it('keel run --state starts the run with that state, and keel state prints it; a --state that is not an object is refused', async () => {
    const id = `cli-state-${randomUUID().slice(0, 8)}`;
    const started = await keel(['run', 'demo', 'Weather in Paris?', '--detach', '--id', id, '--task-queue', taskQueue, '--state', '{"traveller": "Ada"}']);
    expect(started.code).toBe(0);
    const state = await until(() => keel(['state', id]), (r) => r.code === 0, { what: 'keel state to answer', intervalMs: 250 });
    expect(JSON.parse(state.stdout)).toEqual({ traveller: 'Ada' });
    await approvePostcard(id);
    const refused = await keel(['run', 'demo', 'Hi', '--detach', '--task-queue', taskQueue, '--state', '["Ada"]']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--state must be a JSON object of keys and values');
  });

  it('an unknown agent fails at once with the error naming the known agents (exit 1)', async () => {
    const { code, stderr } = await keel(['run', 'nope', 'hi', '--task-queue', taskQueue, '--id', `nope-${randomUUID().slice(0, 8)}`]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/✗ Run nope-[0-9a-f]{8} failed: Unknown agent "nope"\. This worker knows: demo\./);
    expect(stderr).not.toMatch(/^\s+at /m);
  });

  it('keel status of an unknown run says so (exit 1)', async () => {
    const { code, stderr } = await keel(['status', `no-such-run-${randomUUID()}`]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/No run with workflow ID "no-such-run-/);
  });

  it('the worker shuts down cleanly on SIGTERM', async () => {
    worker?.child.kill('SIGTERM');
    expect(await worker?.exited).toBe(0);
    expect(worker?.output()).toContain('Worker stopped.');
  });
});

describe('CLI formatting', () => {
  const plain = createStyle(false);
  const at = '2025-01-01T00:00:00.000Z';

  it('colors only when asked to', () => {
    expect(createStyle(true).red('x')).toBe('\u001b[31mx\u001b[39m');
    expect(plain.red('x')).toBe('x');
    expect(stripAnsi(createStyle(true).bold(createStyle(true).green('ok')))).toBe('ok');
    expect(colorEnabled({ isTTY: true }, {})).toBe(true);
    expect(colorEnabled({ isTTY: false }, {})).toBe(false);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colorEnabled({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
  });

  it('shortens text and JSON to one line', () => {
    expect(oneLine('a\n  b\tc')).toBe('a b c');
    expect(oneLine('abcdef', 4)).toBe('abc…');
    expect(shortJson('{ "city": "Lisbon" }')).toBe('{"city":"Lisbon"}');
    const long = JSON.stringify({ city: 'Lisbon', temperatureC: 17, sky: 'sunny', note: 'x'.repeat(200) });
    expect(shortJson(long, 60)).toBe('{"city":"Lisbon","temperatureC":17,"sky":"sunny",...}');
    expect(shortJson(long, 30)).toBe('{"city":"Lisbon",...}');
    expect(shortJson('not json '.repeat(20), 20)).toHaveLength(20);
  });

  it('formats live events', () => {
    const context: FollowContext = {};
    const events: RunEvent[] = [
      { seq: 1, at, type: 'run.started', agent: 'demo', model: 'demo:travel', input: 'Weather?' },
      { seq: 2, at, type: 'turn.started', turn: 1, agent: 'demo' },
      { seq: 3, at, type: 'tool.requested', turn: 1, callId: 'c1', tool: 'get_weather', arguments: '{"city": "Lisbon"}' },
      { seq: 4, at, type: 'tool.started', turn: 1, callId: 'c1', tool: 'get_weather' },
      { seq: 5, at, type: 'tool.finished', turn: 1, callId: 'c1', tool: 'get_weather', result: '{"city":"Lisbon","temperatureC":17}', isError: false },
      { seq: 6, at, type: 'tool.finished', turn: 1, callId: 'c2', tool: 'get_weather', result: 'no data for "X"', isError: true },
      { seq: 7, at, type: 'tool.finished', turn: 1, callId: 'c3', tool: 'dump', result: 'rows', isError: false, truncatedFrom: 3 * 1024 * 1024 },
      { seq: 8, at, type: 'turn.finished', turn: 2, text: 'The answer is', toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 }, truncated: true },
      { seq: 9, at, type: 'run.finished', status: 'completed', output: 'done' },
    ];
    const lines = events.map((e) => formatEvent(e, context, plain));
    expect(lines).toEqual([
      '▶ demo · demo:travel · Weather?',
      'turn 1 · demo:travel',
      '  → get_weather {"city":"Lisbon"}',
      undefined,
      '  ← get_weather {"city":"Lisbon","temperatureC":17}',
      '  ✗ get_weather no data for "X"',
      '  ← dump rows (cut from 3.0 MB)',
      '  ! the answer was cut off at the token limit',
      undefined,
    ]);
  });

  it('formats transcripts, tables, run lists and statuses', () => {
    const transcript = formatTranscript(
      [
        { role: 'user', content: 'Weather in Lisbon?' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'get_weather', arguments: '{"city":"Lisbon"}' }] },
        { role: 'tool', toolCallId: 'c1', toolName: 'get_weather', content: '{"sky":"sunny"}' },
        { role: 'assistant', content: 'Sunny.\nWarm.' },
      ],
      plain,
    );
    expect(transcript).toEqual([
      'user       Weather in Lisbon?',
      'assistant  (calls 1 tool)',
      '           → get_weather {"city":"Lisbon"}',
      'tool       ← get_weather {"sky":"sunny"}',
      'assistant  Sunny.\n           Warm.',
    ]);

    const styled = createStyle(true);
    const table = formatTable(['A', 'B'], [[styled.green('long value'), 'x'], ['s', 'y']], styled).map(stripAnsi);
    expect(table).toEqual(['A           B', 'long value  x', 's           y']);

    const start = new Date(2025, 0, 2, 3, 4, 5);
    expect(formatRunList([{ workflowId: 'demo-1', agent: 'demo', status: 'completed', startTime: start }], plain)).toEqual([
      'WORKFLOW ID  AGENT  STATUS     STARTED',
      'demo-1       demo   completed  2025-01-02 03:04:05',
    ]);
    expect(formatRunList([], plain)).toEqual(['No runs found.']);

    const status = formatStatus(
      { workflowId: 'demo-1', agent: 'demo', status: 'running', startTime: start, uiUrl: 'http://ui' },
      undefined,
      plain,
    );
    expect(status).toContain('status    running');
    expect(status.at(-1)).toMatch(/no worker answered/);
    const waiting = formatStatus(
      { workflowId: 'demo-1', agent: 'demo', status: 'running', startTime: start, uiUrl: 'http://ui' },
      { kind: 'run', agent: 'demo', status: 'running', turns: 1, usage: { inputTokens: 0, outputTokens: 0 }, messages: 1, lastSeq: 2 },
      plain,
      'turn 1: waiting for a worker that can go on. OPENAI_API_KEY is not set',
    );
    expect(waiting).toContain('now       turn 1: waiting for a worker that can go on. OPENAI_API_KEY is not set');
  });

  it('formats worker log entries on one line, without stacks', () => {
    const error = new Error('Unknown agent "nope".');
    const line = formatLogEntry(
      { level: 'WARN', message: 'Activity failed', timestampNanos: 0n, meta: { workflowId: 'w1', activityType: 'resolveAgent', error } },
      plain,
    );
    expect(line).toMatch(/^\d\d:\d\d:\d\d WARN Activity failed · workflow w1 · activity resolveAgent · Unknown agent "nope"\.$/);
  });

  it('links to the UI that goes with the server, and names the demo model', () => {
    expect(uiUrlFor('127.0.0.1:7433', undefined, {})).toBe('http://localhost:8433');
    expect(uiUrlFor('localhost:7233', undefined, {})).toBe('http://localhost:8233');
    expect(uiUrlFor('temporal.example.com:7233', undefined, {})).toBe('http://localhost:8233');
    expect(uiUrlFor('127.0.0.1:7433', undefined, { KEEL_UI_URL: 'http://ui:1' })).toBe('http://ui:1');
    expect(uiUrlFor('127.0.0.1:7433', 'http://explicit', { KEEL_UI_URL: 'http://ui:1' })).toBe('http://explicit');
    expect(describeDemoModel('demo:travel', {})).toMatch(/offline demo model/);
    expect(describeDemoModel('openai:gpt-4.1-mini', { OPENAI_API_KEY: 'k' })).toBe('openai:gpt-4.1-mini (OPENAI_API_KEY is set)');
    expect(CLI_DEFAULT_TASK_QUEUE).toBe(DEFAULT_TASK_QUEUE);
  });
});
