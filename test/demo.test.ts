import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEMO_PROMPT, demo } from '../examples/demo.js';
import type { PendingApproval } from '../src/core/approval.js';
import { ADDRESS, keel } from './support/cli.js';
import { useKeel } from './support/keel.js';
import { until } from './support/until.js';

/** Waits until the run has a call waiting for approval. */
function waitingCalls(run: { pending(): Promise<PendingApproval[]> }): Promise<PendingApproval[]> {
  return until(() => run.pending(), (pending) => pending.length > 0, { what: 'a call waiting for approval', intervalMs: 100 });
}

describe('the demo agent (npm start)', () => {
  const t = useKeel([demo]);

  it('calls both tools for both cities in parallel, asks to send a postcard, and answers once it is approved', async () => {
    const run = await t.keel.client.start('demo', DEMO_PROMPT);
    const pending = await waitingCalls(run);
    expect(pending).toEqual([
      expect.objectContaining({ callId: 'demo_postcard', tool: 'send_postcard', stage: 'tool', reason: 'send_postcard requires approval', turn: 2 }),
    ]);
    const message = String((pending[0]!.arguments as { message: string }).message);
    expect(message).toMatch(/^Greetings from your travel helper! Lisbon: 17 °C, sunny, \d\d:\d\d \(UTC\+0\); Tokyo: 12 °C, clear, \d\d:\d\d \(UTC\+9\)\.$/);
    expect(await run.status()).toMatchObject({ status: 'awaiting_approval', turns: 2 });
    expect(await run.approve('demo_postcard')).toEqual({ callId: 'demo_postcard', decision: 'allow', pending: 0 });

    const result = await run.result();
    expect(result.status).toBe('completed');
    expect(result.agent).toBe('demo');
    expect(result.turns).toBe(3);
    expect(String(result.output)).toMatch(/Lisbon/);
    expect(String(result.output)).toMatch(/Tokyo/);
    expect(String(result.output)).toContain(`- send postcard: Postcard sent: “${message}”`);

    const events = await run.events();
    const lookups = events.filter((e) => e.type === 'tool.started' && e.tool !== 'send_postcard').map((e) => e.seq);
    const looked = events.filter((e) => e.type === 'tool.finished' && e.tool !== 'send_postcard').map((e) => e.seq);
    expect(lookups).toHaveLength(4);
    // All four were scheduled together, in one workflow task, before any finished. (That they
    // run at the same time is measured inside the tools, in agent-loop.test.ts.)
    expect(Math.max(...lookups)).toBeLessThan(Math.min(...looked));
    // The postcard waited for its approval, then ran.
    const types = events.filter((e) => 'callId' in e && e.callId === 'demo_postcard').map((e) => e.type);
    expect(types).toEqual(['tool.requested', 'approval.requested', 'approval.decided', 'tool.started', 'tool.finished']);
    expect(events.at(-1)).toMatchObject({ type: 'run.finished', status: 'completed' });
  });

  it('takes a deny: the model reads it and answers without the postcard', async () => {
    const run = await t.keel.client.start('demo', 'Weather in Paris?');
    await waitingCalls(run);
    await run.deny('demo_postcard', 'No postcards this week.');
    const result = await run.result();
    expect(result).toMatchObject({ status: 'completed', turns: 3 });
    expect(String(result.output)).toContain('- send postcard: not done (The call to send_postcard was denied (approval): No postcards this week.)');
  });
});

describe('keel demo (npm start)', () => {
  it('without a terminal, runs the demo live and approves the postcard itself, saying how a person would have', async () => {
    const taskQueue = `demo-cli-${randomUUID().slice(0, 8)}`;
    // The child's stdin and stdout are pipes: no terminal, so nobody is asked.
    const { code, stdout, stderr } = await keel(['demo', '--task-queue', taskQueue]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/model\s+demo:travel \(the offline demo model/);
    expect(stdout).toContain('turn 1 · demo:travel');
    expect(stdout).toContain('→ get_weather {"city":"Lisbon"}');
    expect(stdout).toContain('→ get_local_time {"city":"Tokyo"}');
    expect(stdout).toMatch(/← get_weather 12 °C, clear/);
    expect(stdout).toContain('turn 2 · demo:travel');
    expect(stdout).toContain('“One more step, which needs your approval: send_postcard.”');
    expect(stdout).toContain('? send_postcard waits for approval (call demo_postcard) · tool: send_postcard requires approval');
    const id = /run (demo-[0-9a-f]{8}) · task queue/.exec(stdout)?.[1];
    expect(id).toBeDefined();
    expect(stdout).toContain('⏸ send_postcard needs approval. With no terminal to ask in, the demo allows it itself; a person would run:');
    expect(stdout).toContain(`      keel approve ${id} demo_postcard     (or: keel deny ${id} demo_postcard --reason "...")`);
    expect(stdout).toContain('✓ send_postcard allowed by an Update: keel demo: no terminal to ask in');
    expect(stdout).toMatch(/← send_postcard Postcard sent: “Greetings from your travel helper! Lisbon/);
    const answer = stdout.slice(stdout.indexOf('Answer'));
    expect(answer).toMatch(/Lisbon/);
    expect(answer).toMatch(/Tokyo/);
    expect(answer).toMatch(/send postcard: Postcard sent/);
    expect(stdout).toMatch(/completed · 3 turns · \d+ input \+ \d+ output tokens/);
    // The test server's UI port is its port + 1000, as the dev server's default.
    const uiPort = Number(ADDRESS.split(':')[1]) + 1000;
    expect(stdout).toMatch(new RegExp(`Temporal UI: http://localhost:${uiPort}/namespaces/default/workflows/${id}`));
  });
});
