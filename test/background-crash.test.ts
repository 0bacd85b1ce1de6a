/**
 * A worker killed while background agents run: a new worker finishes everything, and the parent
 * reads each report exactly once.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../src/core/run.js';
import { providersFor, startKeel } from './support/keel.js';
import { startModelServer, type ModelServer, type RecordedRequest } from './support/model-server.js';
import { spawnWorker } from './support/spawn-worker.js';
import { crewOverseer, crewWatcher } from './support/team-agents.js';
import { until } from './support/until.js';

let server: ModelServer;
const cleanup: (() => Promise<unknown> | unknown)[] = [];

beforeAll(async () => {
  server = await startModelServer();
});
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn();
  await server?.close();
});

const text = (request: RecordedRequest) => JSON.stringify(request.body.messages);

describe('a worker killed while background agents run', () => {
  it('everything completes on a new worker; no report is lost or read twice', async () => {
    // The overseer spawns two watchers, then sleeps until both have reported their end.
    server.script('crew-overseer-model', (request, i) => {
      if (i === 0) {
        return {
          toolCalls: [
            { id: 'sp1', name: 'spawn_agent', arguments: { name: 'north', goal: 'Watch the north gate.' } },
            { id: 'sp2', name: 'spawn_agent', arguments: { name: 'south', goal: 'Watch the south gate.' } },
          ],
        };
      }
      const seen = server.requests('crew-overseer-model').map(text).join('\n');
      if (seen.includes('north (completed)') && seen.includes('south (completed)')) {
        return { toolCalls: [{ name: 'report_done', arguments: { detail: 'both gates watched' } }] };
      }
      if (/"role":"tool"[^}]*schedule_next_turn|Scheduled: you will wake/.test(text(request).slice(-400))) return { text: 'Sleeping.' };
      return { toolCalls: [{ name: 'schedule_next_turn', arguments: { delay_seconds: 3600, next_prompt: 'Any news?', reason: 'wait for the watchers' } }] };
    });
    // Each watcher: a slow look (the worker dies during it), an alert, then done.
    server.script('crew-watcher-model', (request) => {
      const gate = text(request).includes('north') ? 'north' : 'south';
      if (text(request).includes('report_alert')) return { toolCalls: [{ name: 'report_done', arguments: { detail: `${gate} quiet` } }] };
      return { toolCalls: [{ name: 'report_alert', arguments: { text: `${gate}: a fox` } }], delayMs: 3_000 };
    });

    const taskQueue = `crew-${randomUUID().slice(0, 8)}`;
    const doomed = spawnWorker(taskQueue, server.url, cleanup);
    await doomed.waitFor(/worker ready/);
    const starter = await startKeel({ agents: [], providers: providersFor(server), taskQueue: `idle-${randomUUID().slice(0, 8)}` });
    cleanup.push(() => starter.stop());
    const parent = await starter.client.startMonitor('crew-overseer', 'Watch both gates.', { taskQueue });

    // Both watchers are in their slow model call: kill the worker.
    await until(() => server.requests('crew-watcher-model').length, (n) => n >= 2, { what: 'both watchers in their model call' });
    doomed.child.kill('SIGKILL');

    const rescuer = await startKeel({ agents: [crewOverseer, crewWatcher], providers: providersFor(server), taskQueue });
    cleanup.push(() => rescuer.stop());
    const handle = rescuer.client.getMonitor(parent.workflowId);
    expect(await handle.result()).toMatchObject({ status: 'completed', detail: 'both gates watched' });

    const reports = (await handle.events()).filter((e): e is Extract<RunEvent, { type: 'background.report' }> => e.type === 'background.report');
    expect(reports.map((r) => `${r.name} ${r.kind} ${r.report}`).sort()).toEqual(['north alert 1', 'north completed 2', 'south alert 1', 'south completed 2']);
    // The model read each alert exactly once.
    const prompts = server.requests('crew-overseer-model').map((r) => JSON.stringify(r.body.messages.at(-1)));
    for (const alert of ['north (alert): north: a fox', 'south (alert): south: a fox']) {
      expect(prompts.filter((p) => p.includes(alert))).toHaveLength(1);
    }
  });
});
