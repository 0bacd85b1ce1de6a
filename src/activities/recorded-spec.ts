/**
 * The spec a run recorded, seen from an activity: the worker's own agent when its fingerprint is
 * the same, else the run's record (the `spec` query), asked once per fingerprint and cached.
 * One run, one spec: a model call, a hook or a permission rule always acts on what the run
 * recorded, whatever the worker's code says today.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { AgentSpec } from '../core/agent-spec.js';
import type { AgentDefinition } from '../core/define.js';
import { ErrorTypes } from '../core/errors.js';
import { specHash } from '../core/spec-hash.js';
import { specQuery } from '../workflows/api.js';

export interface RecordedSpecDeps {
  client: Client;
  /** Specs runs recorded, by fingerprint, fetched once per worker. */
  specs?: Map<string, AgentSpec>;
}

export async function recordedSpec(deps: RecordedSpecDeps, agent: AgentDefinition, hash: string | undefined): Promise<AgentSpec> {
  if (hash === undefined || specHash(agent.spec) === hash) return agent.spec;
  const known = deps.specs?.get(hash);
  if (known) return known;
  const { workflowId, runId } = execution();
  const spec = await deps.client.workflow.getHandle(workflowId, runId).query(specQuery, hash);
  if (!spec) {
    throw ApplicationFailure.nonRetryable(`Run ${workflowId} recorded no agent spec with fingerprint ${hash}.`, ErrorTypes.Config);
  }
  deps.specs?.set(hash, spec);
  return spec;
}

/** The workflow execution of the current activity. */
export function execution(): { workflowId: string; runId: string } {
  const execution = Context.current().info.workflowExecution;
  if (!execution) throw ApplicationFailure.nonRetryable('keel activities run only as part of a keel workflow.');
  return execution;
}
