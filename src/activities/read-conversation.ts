/**
 * Reads messages of a session's conversation for a workflow: a fork's copy of its source, or a
 * message an earlier execution holds. The conversation reader queries the live execution (on a
 * first attempt) or replays histories; the answer is a page within about 1 MB, so no activity
 * result nears Temporal's 2 MB payload limit however large the conversation.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { QUERY_PAGE_BYTES, utf8Bytes } from '../core/limits.js';
import type { Message } from '../core/messages.js';
import type { ReadConversationInput, ReadConversationResult } from '../workflows/activity-types.js';
import type { ConversationReader } from './conversation-reader.js';

/** Messages asked of the reader at a time: a page is filled from a few such batches. */
const BATCH = 50;
/** A page stops growing past this (a little under a query page, so the result stays well within 2 MB). */
const PAGE_BYTES = QUERY_PAGE_BYTES - 64 * 1024;

export function createReadConversation(reader: ConversationReader, client: Client) {
  return async function readConversation({ workflowId, runId, from, to }: ReadConversationInput): Promise<ReadConversationResult> {
    const execution = runId ?? (await client.workflow.getHandle(workflowId).describe()).runId;
    const query = Context.current().info.attempt === 1;
    const messages: Message[] = [];
    let bytes = 0;
    let next = from;
    while (next < to && bytes < PAGE_BYTES) {
      const wanted = Array.from({ length: Math.min(BATCH, to - next) }, (_, i) => next + i);
      const found = await reader.read(workflowId, execution, wanted, { query });
      for (const i of wanted) {
        const m = found.get(i);
        if (!m) break;
        const size = utf8Bytes(JSON.stringify(m));
        if (messages.length > 0 && bytes + size > PAGE_BYTES) return { from, messages };
        messages.push(m);
        bytes += size;
        next = i + 1;
      }
      if (next < wanted.at(-1)! + 1) break;
      Context.current().heartbeat();
    }
    if (messages.length === 0) {
      throw ApplicationFailure.retryable(`Could not read message ${from} of session ${workflowId}: it was found neither in the live session nor in its history.`);
    }
    return { from, messages };
  };
}
