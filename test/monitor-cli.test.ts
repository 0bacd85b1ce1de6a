/** `keel monitor start`, `keel status`, `keel inject|wake|pause|resume|stop`, on the demo model as a newcomer would. */
import { describe, expect, it } from 'vitest';
import { demo } from '../examples/demo.js';
import type { MonitorState } from '../src/core/monitor.js';
import { keel } from './support/cli.js';
import { allowPostcards, useKeel } from './support/keel.js';
import { until as waitUntil } from './support/until.js';

const until = <T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 60_000) => waitUntil(read, ok, { timeoutMs, intervalMs: 250 });


// A plain run of the demo agent sends a postcard, which needs approval: the worker's approver allows it.
const t = useKeel([demo], { approver: allowPostcards });

async function status(id: string): Promise<{ status: string; kind: string; state: MonitorState }> {
  const { code, stdout, stderr } = await keel(['status', id, '--json']);
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout);
}


describe('keel monitor', () => {
  it('starts a monitor on the demo model; inject wakes it; it reports done after its looks', async () => {
    const started = await keel(['monitor', 'start', 'demo', '--goal', 'Weather in Lisbon?', '--json', '--task-queue', t.keel.taskQueue]);
    expect(started.code, started.stderr).toBe(0);
    const { workflowId } = JSON.parse(started.stdout) as { workflowId: string };
    expect(workflowId).toMatch(/^demo-monitor-[0-9a-f]{8}$/);

    // The status query and the KeelStatus search attribute (describe) can be a moment apart: wait for both.
    const asleep = await until(() => status(workflowId), (s) => s.state?.phase === 'sleeping' && s.status === 'sleeping');
    expect(asleep).toMatchObject({ kind: 'monitor', status: 'sleeping', state: { turns: 1, wakeReason: 'look again (2 of 3)' } });
    const text = await keel(['status', workflowId]);
    expect(text.stdout).toMatch(/phase\s+sleeping/);
    expect(text.stdout).toMatch(/next wake\s+\S+ · look again \(2 of 3\)/);

    const injected = await keel(['inject', workflowId, 'Also check Tokyo.']);
    expect(injected.code, injected.stderr).toBe(0);
    expect(injected.stdout).toMatch(/Queued for the next turn/);
    await until(() => status(workflowId), (s) => s.state?.turns === 2 && s.state.phase === 'sleeping');
    // The message reached the model: the second look covered Tokyo too.
    const second = t.keel.client.getMonitor(workflowId);
    expect(JSON.stringify(await second.transcript())).toMatch(/Tokyo — weather: 12 °C/);

    expect((await keel(['wake', workflowId])).code).toBe(0);
    const done = await until(() => status(workflowId), (s) => s.status === 'completed');
    expect(done.state).toMatchObject({ phase: 'completed', turns: 3 });
    expect((await second.result()).detail).toMatch(/Lisbon — weather: 17 °C, sunny/);
  });

  it('pause, resume and stop', async () => {
    const started = await keel(['monitor', 'start', 'demo', '--goal', 'Weather in Paris?', '--json', '--task-queue', t.keel.taskQueue]);
    const { workflowId } = JSON.parse(started.stdout) as { workflowId: string };
    await until(() => status(workflowId), (s) => s.state?.phase === 'sleeping');
    expect((await keel(['pause', workflowId])).code).toBe(0);
    await keel(['wake', workflowId]);
    await until(() => status(workflowId), (s) => s.state?.phase === 'paused');
    expect((await keel(['resume', workflowId])).code).toBe(0);
    await until(() => status(workflowId), (s) => s.state?.turns === 2);
    const stopped = await keel(['stop', workflowId, 'enough for today']);
    expect(stopped.code, stopped.stderr).toBe(0);
    const end = await until(() => status(workflowId), (s) => s.status === 'cancelled');
    expect(end.state.phase).toBe('cancelled');
    expect((await t.keel.client.getMonitor(workflowId).result()).detail).toBe('enough for today');
    // A command for a monitor that has ended says so.
    const late = await keel(['wake', workflowId]);
    expect(late.code).toBe(1);
    expect(late.stderr).toMatch(/has ended \(cancelled\)/);
  });

  it('refuses monitor commands for a plain run', async () => {
    const run = await t.keel.client.start('demo', 'Weather in Oslo?');
    await run.result();
    const { code, stderr } = await keel(['inject', run.workflowId, 'hi']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/is a plain run, not a monitor/);
  });
});
