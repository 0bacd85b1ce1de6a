/**
 * What the `keel schedule` commands do (their options and help are in program.ts). Loaded only
 * once a schedule command runs, like commands.ts.
 */
import { ScheduleAlreadyRunning, ScheduleNotFoundError } from '@temporalio/client';
import type { AgentClient } from '../agent-client.js';
import { ScheduleInputError, type AgentScheduleDescription, type OverlapPolicy } from '../schedules.js';
import { withClient } from './commands.js';
import { CliError, type GlobalOptions } from './common.js';
import { colorEnabled, createStyle, formatScheduleDescription, formatScheduleList, formatTime, type Style } from './format.js';

const out = (line = '') => process.stdout.write(`${line}\n`);

function style(): Style {
  return createStyle(colorEnabled(process.stdout));
}
function width(): number {
  return Math.min(160, Math.max(60, process.stdout.columns ?? 100));
}

/** Errors of the user's input or of a name: their messages say all, so the CLI prints them as they are. */
async function explained<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ScheduleInputError || e instanceof ScheduleNotFoundError || e instanceof ScheduleAlreadyRunning) {
      throw new CliError(e.message);
    }
    throw e;
  }
}

/** The schedule with the status of each recent run (what a person asks first: did they work?). */
async function describeWithStatuses(client: AgentClient, name: string) {
  const description = await client.schedules.describe(name);
  const recentActions = await Promise.all(
    description.recentActions.map(async (run) => {
      // A run may be gone (its retention passed): its status is then unknown, not an error.
      const status = run.running ? 'running' : await client.getHandle(run.workflowId).describe().then((r) => r.status, () => undefined);
      return { ...run, ...(status !== undefined && { status }) };
    }),
  );
  return { ...description, recentActions };
}

function printDescription(description: AgentScheduleDescription & { recentActions: { status?: string }[] }, json: boolean): void {
  if (json) out(JSON.stringify(description, null, 2));
  else for (const line of formatScheduleDescription(description, style(), width())) out(line);
}

export interface CreateScheduleCommandOptions {
  agent: string;
  prompt: string;
  cron?: string;
  every?: string;
  monitor?: boolean;
  overlap?: OverlapPolicy;
  taskQueue?: string;
  json?: boolean;
}

export async function createScheduleCommand(name: string, options: CreateScheduleCommandOptions, globals: GlobalOptions) {
  return withClient(
    globals,
    (client) =>
      explained(async () => {
        const description = await client.schedules.create(name, {
          agent: options.agent,
          prompt: options.prompt,
          ...(options.cron !== undefined && { cron: options.cron }),
          ...(options.every !== undefined && { every: options.every }),
          ...(options.monitor && { kind: 'monitor' as const }),
          ...(options.overlap && { overlap: options.overlap }),
        });
        if (!options.json) out(style().green(`Created schedule ${name}.`));
        printDescription(description, options.json ?? false);
        return 0;
      }),
    options.taskQueue,
  );
}

export async function listSchedulesCommand(options: { json?: boolean }, globals: GlobalOptions) {
  return withClient(globals, async (client) => {
    const schedules = await client.schedules.list();
    if (options.json) out(JSON.stringify(schedules, null, 2));
    else for (const line of formatScheduleList(schedules, style())) out(line);
    return 0;
  });
}

export async function describeScheduleCommand(name: string, options: { json?: boolean }, globals: GlobalOptions) {
  return withClient(globals, (client) =>
    explained(async () => {
      printDescription(await describeWithStatuses(client, name), options.json ?? false);
      return 0;
    }),
  );
}

export async function pauseScheduleCommand(name: string, options: { note?: string }, globals: GlobalOptions) {
  return withClient(globals, (client) =>
    explained(async () => {
      await client.schedules.pause(name, options.note);
      out(`Paused schedule ${name}: it starts no runs until \`keel schedule unpause ${name}\`. Runs already started go on.`);
      return 0;
    }),
  );
}

export async function unpauseScheduleCommand(name: string, options: { note?: string }, globals: GlobalOptions) {
  return withClient(globals, (client) =>
    explained(async () => {
      await client.schedules.unpause(name, options.note);
      const { nextActionTimes } = await client.schedules.describe(name);
      out(`Unpaused schedule ${name}: next run at ${formatTime(nextActionTimes[0])}.`);
      return 0;
    }),
  );
}

export async function triggerScheduleCommand(name: string, globals: GlobalOptions) {
  return withClient(globals, (client) =>
    explained(async () => {
      await client.schedules.trigger(name);
      out(`Triggered schedule ${name}: a run starts now. See it with: keel schedule describe ${name}`);
      return 0;
    }),
  );
}

export async function deleteScheduleCommand(name: string, globals: GlobalOptions) {
  return withClient(globals, (client) =>
    explained(async () => {
      await client.schedules.delete(name);
      out(`Deleted schedule ${name}. The runs it started are ordinary runs: they go on, and keel list shows them.`);
      return 0;
    }),
  );
}
