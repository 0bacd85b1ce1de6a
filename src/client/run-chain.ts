/**
 * Reading a run across continue-as-new. Each execution holds only its own messages and events;
 * its query answers are bounded pages that point to the execution before it. These functions
 * follow the pages and the chain, for the client and for the model activity alike.
 */
import type { WorkflowClient } from '@temporalio/client';
import type { Message } from '../core/messages.js';
import type { RunEvent } from '../core/run.js';
import { eventsQuery, transcriptQuery } from '../workflows/api.js';

/** Messages `from..to` (`to` excluded; default: all) of the run, reading from execution `runId` (default: the latest). */
export async function readMessages(
  client: WorkflowClient,
  workflowId: string,
  runId: string | undefined,
  from = 0,
  to?: number,
): Promise<Message[]> {
  const handle = client.getHandle(workflowId, runId);
  let page = await handle.query(transcriptQuery, { from, ...(to !== undefined && { to }) });
  const end = Math.min(to ?? page.total, page.total);
  const out: Message[] = [];
  if (from < page.firstHeld && page.previousRunId) {
    out.push(...(await readMessages(client, workflowId, page.previousRunId, from, Math.min(end, page.firstHeld))));
  }
  for (;;) {
    out.push(...page.messages);
    const next = page.from + page.messages.length;
    if (next >= end || page.messages.length === 0) break;
    page = await handle.query(transcriptQuery, { from: next, to: end });
  }
  return out;
}

/** Events with `seq` greater than `after`, reading from execution `runId` (default: the latest). */
export async function readEvents(
  client: WorkflowClient,
  workflowId: string,
  runId: string | undefined,
  after = 0,
): Promise<RunEvent[]> {
  const handle = client.getHandle(workflowId, runId);
  let page = await handle.query(eventsQuery, after);
  const out: RunEvent[] = [];
  if (after + 1 < page.firstSeq && page.previousRunId) {
    const earlier = await readEvents(client, workflowId, page.previousRunId, after);
    out.push(...earlier.filter((e) => e.seq < page.firstSeq));
  }
  for (;;) {
    out.push(...page.events);
    const last = page.events.at(-1)?.seq;
    if (last === undefined || last >= page.lastSeq) break;
    page = await handle.query(eventsQuery, last);
  }
  return out;
}
