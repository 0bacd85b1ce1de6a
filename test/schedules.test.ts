/**
 * Schedules on the tests' dev server: a Temporal Schedule starts ordinary runs of an agent,
 * pauses, resumes, triggers, holds its overlap policy, and goes; through AgentSchedules and
 * through the `keel schedule` commands (bin/keel.js, compiled code, as a user runs it).
 * Every schedule gets a name of its own and is deleted after its test.
 */
import { ScheduleAlreadyRunning, ScheduleNotFoundError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { demo } from '../examples/demo.js';
import { RunFailedError } from '../src/client/agent-client.js';
import { ScheduleInputError, type AgentScheduleDescription, type CreateScheduleOptions } from '../src/client/schedules.js';
import { defineAgent } from '../src/core/define.js';
import { keel as runKeel, type CliResult } from './support/cli.js';
import { allowPostcards, useKeel } from './support/keel.js';
import { until as waitUntil } from './support/until.js';

/** The model of the slow agent answers only when the test lets it (`delayMs`), so its run lasts as long as needed. */
const SLOW_MODEL = `schedule-slow-${randomUUID().slice(0, 8)}`;
const slow = defineAgent({ name: 'schedule-slow', instructions: 'Take your time.', model: `openai:${SLOW_MODEL}` });

// The demo agent ends by sending a postcard, which needs approval: the worker's approver allows it, so the
// scheduled runs end without a person (a run left waiting would hold up the schedule's overlap policy).
const t = useKeel([demo, slow], { approver: allowPostcards });

const created = new Set<string>();
const uniqueName = (what: string) => `sched-${what}-${randomUUID().slice(0, 8)}`;

afterAll(async () => {
  // Whatever a test left behind (a failed one, say): schedules outlive the test run otherwise.
  for (const name of created) await t.keel.client.schedules.delete(name).catch(() => undefined);
});

async function create(name: string, options: CreateScheduleOptions): Promise<AgentScheduleDescription> {
  created.add(name);
  return t.keel.client.schedules.create(name, options);
}

/** Reads until `done` holds; gives up (with what it last read) well inside the test's timeout. */
const until = <T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> =>
  waitUntil(read, done, { what, timeoutMs: 45_000, intervalMs: 250 });

const describeSchedule = (name: string) => () => t.keel.client.schedules.describe(name);

/** Pauses, lets its runs end, deletes: no run is left open on a worker that is about to stop. */
async function retire(name: string): Promise<void> {
  await t.keel.client.schedules.pause(name);
  await until(describeSchedule(name), (d) => d.runningActions.length === 0, `the runs of ${name} to end`);
  await t.keel.client.schedules.delete(name);
  created.delete(name);
}

describe('AgentSchedules', () => {
  it('starts ordinary agentRun runs at its interval; list and describe show it', async () => {
    const name = uniqueName('every');
    const description = await create(name, { agent: 'demo', prompt: 'Weather in Lisbon?', every: '2s' });
    expect(description).toMatchObject({
      name,
      agent: 'demo',
      kind: 'run',
      prompt: 'Weather in Lisbon?',
      workflowType: 'agentRun',
      taskQueue: t.keel.taskQueue,
      spec: { every: '2s' },
      overlap: 'skip',
      paused: false,
      actionsTaken: 0,
    });
    expect(description.nextActionTimes.length).toBeGreaterThan(0);
    expect(description.uiUrl).toMatch(new RegExp(`/namespaces/default/schedules/${name}$`));

    const { recentActions } = await until(describeSchedule(name), (d) => d.recentActions.length >= 2, 'two scheduled runs');
    for (const action of recentActions.slice(0, 2)) {
      // Named as Temporal names the runs of a schedule: <name>-<time it was due>.
      expect(action.workflowId).toMatch(new RegExp(`^${name}-\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$`));
      const run = t.keel.client.getHandle(action.workflowId);
      const result = await run.result();
      expect(result).toMatchObject({ status: 'completed', agent: 'demo', turns: 3 });
      expect(String(result.output)).toMatch(/Postcard sent/);
      expect(String(result.output)).toMatch(/Lisbon/);
      // An ordinary run: keel's search attributes, a summary, and the schedule that started it.
      expect(await run.describe()).toMatchObject({ workflowId: action.workflowId, agent: 'demo', status: 'completed' });
      const execution = await run.workflow.describe();
      expect(execution.type).toBe('agentRun');
      expect(await execution.staticSummary()).toBe('demo: Weather in Lisbon?');
      expect(await execution.staticDetails()).toContain(`schedule **${name}** (every 2s)`);
      expect(execution.memo).toEqual({ prompt: 'Weather in Lisbon?', schedule: name });
      expect(execution.searchAttributes.TemporalScheduledById).toEqual([name]);
    }

    const listed = await until(
      () => t.keel.client.schedules.list(),
      (all) => all.some((s) => s.name === name),
      `${name} in the list`,
    );
    expect(listed.find((s) => s.name === name)).toMatchObject({
      agent: 'demo',
      kind: 'run',
      prompt: 'Weather in Lisbon?',
      spec: { every: '2s' },
      paused: false,
    });
    await retire(name);
  });

  it('pause stops new runs, unpause resumes them', async () => {
    const name = uniqueName('pause');
    await create(name, { agent: 'demo', prompt: 'Weather in Paris?', every: '1s' });
    await until(describeSchedule(name), (d) => d.actionsTaken >= 1, 'a first run');

    await t.keel.client.schedules.pause(name, 'a quiet moment');
    const paused = await until(describeSchedule(name), (d) => d.paused, 'the schedule to say it is paused');
    expect(paused.note).toBe('a quiet moment');
    // A twin on the same interval, started now, left running: once the server has started three
    // of its runs, several intervals have passed for the paused one too, which started none.
    const twin = uniqueName('pause-twin');
    await create(twin, { agent: 'demo', prompt: 'Weather in Paris?', every: '1s' });
    await until(describeSchedule(twin), (d) => d.actionsTaken >= 3, 'three runs of the twin');
    await retire(twin);
    const after = await t.keel.client.schedules.describe(name);
    expect(after.actionsTaken).toBe(paused.actionsTaken);
    expect(after.recentActions).toHaveLength(paused.recentActions.length);

    await t.keel.client.schedules.unpause(name);
    const resumed = await until(describeSchedule(name), (d) => d.actionsTaken > paused.actionsTaken, 'a run after unpause');
    expect(resumed.paused).toBe(false);
    await retire(name);
  });

  it('trigger starts a run at once, also while paused', async () => {
    const name = uniqueName('trigger');
    await create(name, { agent: 'demo', prompt: 'Weather in Tokyo?', every: '1h', paused: true });
    expect((await t.keel.client.schedules.describe(name)).actionsTaken).toBe(0);

    await t.keel.client.schedules.trigger(name);
    const { recentActions, actionsTaken } = await until(describeSchedule(name), (d) => d.recentActions.length === 1, 'the triggered run');
    expect(actionsTaken).toBe(1);
    const result = await t.keel.client.getHandle(recentActions[0]!.workflowId).result();
    expect(result.status).toBe('completed');
    expect(String(result.output)).toMatch(/Tokyo/);
    await retire(name);
  });

  it('delete removes it; an unknown name is an error that says so', async () => {
    const name = uniqueName('delete');
    await create(name, { agent: 'demo', prompt: 'Weather in Berlin?', every: '1h', paused: true });
    await until(() => t.keel.client.schedules.list(), (all) => all.some((s) => s.name === name), `${name} in the list`);

    await t.keel.client.schedules.delete(name);
    created.delete(name);
    const gone = t.keel.client.schedules.describe(name);
    await expect(gone).rejects.toThrow(ScheduleNotFoundError);
    await expect(gone).rejects.toThrow(`No schedule named "${name}" (list them with: keel schedule list).`);
    await until(() => t.keel.client.schedules.list(), (all) => !all.some((s) => s.name === name), `${name} to leave the list`);
    for (const call of ['delete', 'pause', 'unpause', 'trigger'] as const) {
      await expect(t.keel.client.schedules[call](name)).rejects.toThrow(`No schedule named "${name}"`);
    }
  });

  it('overlap skip: while a run runs past the interval, no second run starts; after it ends, one does', async () => {
    // The first request waits (much longer than the test); later ones answer at once.
    t.server.script(SLOW_MODEL, (_request, index) => (index === 0 ? { text: 'late', delayMs: 600_000 } : { text: 'done' }));
    const name = uniqueName('skip');
    await create(name, { agent: 'schedule-slow', prompt: 'Work slowly.', every: '1s' });

    const during = await until(describeSchedule(name), (d) => d.actionsSkipped >= 3, 'three skipped times');
    expect(during.actionsTaken).toBe(1);
    expect(during.recentActions).toHaveLength(1);
    const first = during.recentActions[0]!.workflowId;
    expect(during.runningActions.map((a) => a.workflowId)).toEqual([first]);
    expect(during.recentActions[0]!.running).toBe(true);
    expect(t.server.requests(SLOW_MODEL)).toHaveLength(1);

    // The first run ends (cancelled): the next due time starts the second.
    await t.keel.client.getHandle(first).cancel();
    await expect(t.keel.client.getHandle(first).result()).rejects.toThrow(RunFailedError);
    const later = await until(describeSchedule(name), (d) => d.actionsTaken >= 2, 'a second run');
    const second = later.recentActions[1]!.workflowId;
    expect(second).not.toBe(first);
    expect((await t.keel.client.getHandle(second).result()).output).toBe('done');
    await retire(name);
  });

  it('a monitor schedule starts agentMonitor with { agent, goal, budgets, context }', async () => {
    const name = uniqueName('monitor');
    const description = await create(name, {
      kind: 'monitor',
      agent: 'demo',
      prompt: 'Keep an eye on the weather in Lisbon.',
      cron: '0 9 * * MON-FRI',
      overlap: 'buffer_one',
      budgets: { maxTurns: 3 },
      context: { team: 'ops' },
      paused: true,
      note: 'not yet',
    });
    expect(description).toMatchObject({
      kind: 'monitor',
      workflowType: 'agentMonitor',
      spec: { cron: '0 9 * * MON-FRI' },
      overlap: 'buffer_one',
      paused: true,
      note: 'not yet',
      budgets: { maxTurns: 3 },
      context: { team: 'ops' },
    });
    // What any Temporal client sees of the action: the monitor's plain JSON input.
    const raw = await t.keel.env.client.schedule.getHandle(name).describe();
    expect(raw.action.args).toEqual([
      { agent: 'demo', goal: 'Keep an eye on the weather in Lisbon.', budgets: { maxTurns: 3 }, context: { team: 'ops' } },
    ]);
    expect(raw.action.staticSummary).toBe('demo (monitor): Keep an eye on the weather in Lisbon.');
    expect(raw.action.workflowId).toBe(name);
    await t.keel.client.schedules.delete(name);
    created.delete(name);
  });

  it('a triggered monitor schedule runs a monitor to its end', async () => {
    const name = uniqueName('monitor-run');
    await create(name, { kind: 'monitor', agent: 'demo', prompt: 'Weather in Lisbon?', every: '1h', paused: true });
    await t.keel.client.schedules.trigger(name);
    const started = await until(describeSchedule(name), (d) => d.recentActions.length > 0, 'the triggered monitor');
    const monitor = t.keel.client.getMonitor(started.recentActions[0]!.workflowId);
    // The demo model as a monitor looks three times, ten seconds apart, then reports done.
    expect(await monitor.result()).toMatchObject({ status: 'completed', turns: 3, detail: expect.stringMatching(/Lisbon/) });
    expect(await monitor.run.describe()).toMatchObject({ kind: 'monitor', status: 'completed' });
  }, 90_000);

  it('refuses input that cannot work, saying what is wrong and what to do', async () => {
    const name = uniqueName('invalid');
    const base = { agent: 'demo', prompt: 'Weather?' };
    const refusals: [CreateScheduleOptions, string | RegExp][] = [
      [base, 'Say when the schedule starts runs: give exactly one of cron (--cron "*/15 * * * *") and every (--every 1h).'],
      [{ ...base, cron: '0 * * * *', every: '1h' }, 'Both a cron expression and an interval were given: give exactly one of'],
      [{ ...base, cron: '61 * * * *' }, /^The cron expression "61 \* \* \* \*" is not valid: Minute is not in range \[0-59\]\. A cron expression has 5 fields/],
      [{ ...base, cron: 'every day' }, /^The cron expression "every day" is not valid: .*5-7 fields/],
      [{ ...base, every: 'soon' }, 'The interval "soon" is not a duration: write it with a unit, such as "30s", "15m", "1h" or "1d".'],
      [{ ...base, every: '60' }, 'The interval "60" is shorter than a second (60 ms: a number without a unit is milliseconds)'],
      [{ ...base, every: '1500ms' }, 'The interval "1500ms" is not a whole number of seconds'],
      [{ ...base, every: '1h', overlap: 'never' as never }, /^Unknown overlap policy "never": use one of skip \(the default: no new run while one runs\), buffer_one .*terminate_other/],
      [{ ...base, every: '1h', budgets: { maxTurns: 3 } }, 'Budgets are for monitors: add kind "monitor" (--monitor), or drop the budgets.'],
      [{ ...base, prompt: ' ', every: '1h' }, 'Give the prompt of each scheduled run'],
      [{ ...base, every: '1h', context: { blob: 'x'.repeat(70_000) } }, 'The context is over 64 KB of JSON'],
    ];
    for (const [options, message] of refusals) {
      const attempt = create(name, options);
      await expect(attempt).rejects.toThrow(ScheduleInputError);
      await expect(attempt).rejects.toThrow(message);
    }
    await expect(create('not a name', { ...base, every: '1h' })).rejects.toThrow(/^The schedule name "not a name" will not do: use letters, digits/);
    // Nothing was made of them, not even of the cron expression that only the server could judge.
    await expect(t.keel.client.schedules.describe(name)).rejects.toThrow(ScheduleNotFoundError);

    await create(name, { ...base, every: '1h', paused: true });
    const again = create(name, { ...base, every: '1h' });
    await expect(again).rejects.toThrow(ScheduleAlreadyRunning);
    await expect(again).rejects.toThrow(`A schedule named "${name}" already exists: pick another name, or delete it first (keel schedule delete ${name}).`);
    await t.keel.client.schedules.delete(name);
    created.delete(name);
  });
});

// ---------------------------------------------------------------------------------------------
// keel schedule: bin/keel.js as a child process (it runs dist/, which the tests' globalSetup builds)

/** `keel ...` on the tests' server, without colors, API keys or the developer's Temporal settings. */
const keel = (...args: string[]) => runKeel(args);

async function describeJson(name: string) {
  const { code, stdout, stderr } = await keel('schedule', 'describe', name, '--json');
  if (code !== 0) throw new Error(`keel schedule describe ${name} failed: ${stderr}`);
  return JSON.parse(stdout) as AgentScheduleDescription & { recentActions: { workflowId: string; status?: string }[] };
}

describe('keel schedule', () => {
  it('has a help with its subcommands, each with examples', async () => {
    const { code, stdout } = await keel('schedule', '--help');
    expect(code).toBe(0);
    for (const sub of ['create', 'list', 'describe', 'pause', 'unpause', 'trigger', 'delete']) {
      expect(stdout).toMatch(new RegExp(`^  ${sub} `, 'm'));
      const help = await keel('schedule', sub, '--help');
      expect(help.stdout).toContain(`Usage: keel schedule ${sub}`);
      expect(help.stdout).toMatch(/Examples:\n {2}\$ keel schedule /);
    }
    expect((await keel('--help')).stdout).toMatch(/^ {2}schedule /m);
  });

  it('create, list, describe, pause, trigger, unpause, delete', async () => {
    const name = uniqueName('cli');
    created.add(name);
    const made = await keel('schedule', 'create', name, '--agent', 'demo', '--every', '1h', '--prompt', 'Weather in Sydney?', '--task-queue', t.keel.taskQueue);
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    expect(made.stdout).toContain(`Created schedule ${name}.`);
    expect(made.stdout).toMatch(/^agent {7}demo \(a plain run each time\)$/m);
    expect(made.stdout).toMatch(/^when {8}every 1h$/m);
    expect(made.stdout).toMatch(/^overlap {5}skip$/m);
    expect(made.stdout).toMatch(/^state {7}active$/m);
    expect(made.stdout).toMatch(/^next {8}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/m);

    // Listing is eventually consistent.
    const list = await until(() => keel('schedule', 'list'), (l) => l.stdout.includes(name), `${name} in keel schedule list`);
    expect(list.stdout).toMatch(/^NAME\s+AGENT\s+KIND\s+WHEN\s+STATE\s+NEXT RUN$/m);
    expect(list.stdout).toMatch(new RegExp(`^${name}\\s+demo\\s+run\\s+every 1h\\s+active\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d$`, 'm'));
    const listed = JSON.parse((await keel('schedule', 'list', '--json')).stdout) as { name: string }[];
    expect(listed.find((s) => s.name === name)).toMatchObject({ agent: 'demo', spec: { every: '1h' }, paused: false });

    const paused = await keel('schedule', 'pause', name, '--note', 'cli test');
    expect(paused.code).toBe(0);
    expect(paused.stdout).toContain(`Paused schedule ${name}`);
    expect(await describeJson(name)).toMatchObject({ paused: true, note: 'cli test' });

    const triggered = await keel('schedule', 'trigger', name);
    expect(triggered.code).toBe(0);
    expect(triggered.stdout).toContain(`Triggered schedule ${name}: a run starts now.`);
    // describe shows the run it started, with its workflow ID and, once it has ended, its status.
    const ran = await until(() => describeJson(name), (d) => d.recentActions[0]?.status === 'completed', 'the triggered run to complete');
    expect(ran.recentActions).toHaveLength(1);
    const workflowId = ran.recentActions[0]!.workflowId;
    expect(workflowId.startsWith(`${name}-`)).toBe(true);
    const shown = await keel('schedule', 'describe', name);
    expect(shown.stdout).toMatch(/^state {7}paused · cli test$/m);
    expect(shown.stdout).toMatch(/^runs {8}1 started · 0 skipped \(overlap\) · 0 running$/m);
    expect(shown.stdout).toMatch(new RegExp(`^Recent runs\\n {2}\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d {2}${workflowId} {2}completed$`, 'm'));
    // The run is an ordinary run: keel status reads it.
    expect((await keel('status', workflowId)).stdout).toMatch(/status\s+completed/);

    const unpaused = await keel('schedule', 'unpause', name);
    expect(unpaused.code).toBe(0);
    expect(unpaused.stdout).toMatch(new RegExp(`^Unpaused schedule ${name}: next run at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.$`, 'm'));
    expect(await describeJson(name)).toMatchObject({ paused: false });

    const deleted = await keel('schedule', 'delete', name);
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toContain(`Deleted schedule ${name}.`);
    created.delete(name);
    const gone = await keel('schedule', 'describe', name);
    expect(gone.code).toBe(1);
    expect(gone.stderr.trim()).toBe(`No schedule named "${name}" (list them with: keel schedule list).`);
  });

  it('create --monitor --cron --overlap --json prints the schedule as JSON', async () => {
    const name = uniqueName('cli-monitor');
    created.add(name);
    const { code, stdout } = await keel(
      'schedule', 'create', name, '--agent', 'demo', '--monitor', '--cron', '30 6 * * *', '--overlap', 'buffer_one',
      '--prompt', 'Watch the weather in Lisbon.', '--task-queue', t.keel.taskQueue, '--json',
    );
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      name,
      kind: 'monitor',
      workflowType: 'agentMonitor',
      prompt: 'Watch the weather in Lisbon.',
      spec: { cron: '30 6 * * *' },
      overlap: 'buffer_one',
      taskQueue: t.keel.taskQueue,
    });
    const shown = await keel('schedule', 'describe', name);
    expect(shown.stdout).toMatch(/^agent {7}demo \(a monitor each time\)$/m);
    expect(shown.stdout).toMatch(/^when {8}cron 30 6 \* \* \* \(UTC\)$/m);
    expect(shown.stdout).toMatch(/^Recent runs\n {2}none yet$/m);
    expect((await keel('schedule', 'delete', name)).code).toBe(0);
    created.delete(name);
  });

  it('says what is wrong and what to do, with exit code 1 and no stack trace', async () => {
    const name = uniqueName('cli-invalid');
    const create = (...args: string[]) => keel('schedule', 'create', name, '--agent', 'demo', '--prompt', 'Weather?', ...args);
    const cases: [Promise<CliResult>, string | RegExp][] = [
      [create(), 'give exactly one of cron (--cron "*/15 * * * *") and every (--every 1h).'],
      [create('--cron', '0 * * * *', '--every', '1h'), 'Both a cron expression and an interval were given'],
      [create('--cron', '* * *'), /The cron expression "\* \* \*" is not valid: .*5-7 fields\. A cron expression has 5 fields/],
      [create('--every', 'often'), 'The interval "often" is not a duration: write it with a unit'],
      [create('--every', '1h', '--overlap', 'never'), "argument 'never' is invalid. Allowed choices are skip, buffer_one, allow_all, cancel_other, terminate_other."],
      [keel('schedule', 'create', name, '--every', '1h', '--prompt', 'Weather?'), "required option '--agent <agent>' not specified"],
      [keel('schedule', 'pause', name), `No schedule named "${name}" (list them with: keel schedule list).`],
      [keel('schedule', 'trigger', name), `No schedule named "${name}"`],
    ];
    for (const [result, message] of cases) {
      const { code, stdout, stderr } = await result;
      expect(code).toBe(1);
      expect(stdout).toBe('');
      if (typeof message === 'string') expect(stderr).toContain(message);
      else expect(stderr).toMatch(message);
      expect(stderr).not.toMatch(/^\s+at /m);
    }
  });
});
