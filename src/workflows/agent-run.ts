/**
 * The plain run: one workflow per run, one episode (turns until the model answers, within the
 * agent's turn limit), opened and closed by the shared lifecycle (lifecycle.ts). The
 * conversation and the event log are workflow state, exposed by queries.
 */
import { continueAsNew, setCurrentDetails, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { checkAgentRunInput } from '../core/boundary.js';
import { userMessage } from '../core/messages.js';
import type { AgentRunInput, AgentRunResult } from '../core/run.js';
import type { Tripwire } from '../core/guardrails.js';
import { zeroUsage } from '../core/usage.js';
import { statusQuery, statusSearchAttribute } from './api.js';
import { runEpisode } from './episode.js';
import { Lifecycle } from './lifecycle.js';
import type { Run } from './run-state.js';
import { SubAgents } from './sub-agents.js';

export async function agentRun(input: AgentRunInput): Promise<AgentRunResult> {
  const life = new Lifecycle({
    start: { agent: input?.agent, context: input?.context, state: input?.state, overrides: input?.overrides, prompt: input?.input },
    continued: input?.continued,
    parent: input?.parent,
    stream: input?.options?.stream,
    // A run started by a client that did not set them (the `temporal` CLI) sets them itself, once.
    needsSearchAttributes: (status) => status !== 'running',
    onWaiting: (run, waiting) => {
      run.status = waiting ? 'awaiting_approval' : 'running';
      upsertSearchAttributes([{ key: statusSearchAttribute, value: run.status }]);
      const pending = run.approvals.list();
      setCurrentDetails(
        waiting
          ? `turn ${run.turns}: awaiting approval of ${pending.map((p) => `${p.tool} (${p.callId})`).join(', ')}. Decide with: keel approve ${workflowInfo().workflowId} <call>`
          : `turn ${run.turns}: running ${run.agent.name}`,
      );
    },
    onEnd: (status) => upsertSearchAttributes([{ key: statusSearchAttribute, value: status }]),
  });
  setHandler(statusQuery, () => life.run?.statusAnswer() ?? { kind: 'run', agent: typeof input?.agent === 'string' ? input.agent : '', status: 'running', turns: 0, usage: zeroUsage(), messages: 0, lastSeq: 0 });
  try {
    checkInput(input);
    const opened = await life.open();
    const { run } = opened;
    if ('blocked' in opened) return await finish(life, run, 'blocked', null, opened.blocked);
    if (opened.prompt !== undefined) run.append([userMessage(opened.prompt)]);
    const end = await runEpisode(run, {
      mayTurn: () => run.turns < run.agent.maxTurns,
      beforeTurn: async () => {
        if (!life.continueAsNewDue({ afterEvents: input.options?.continueAsNewAfterEvents })) return;
        await life.continueAsNew(run, () => continueAsNew<typeof agentRun>({ ...input, state: undefined, continued: run.carry() }));
      },
    });
    if (end.status === 'blocked') return await finish(life, run, 'blocked', null, end.blocked.tripwire);
    return await finish(life, run, end.status, end.output);
  } catch (err) {
    return await life.fail(err);
  }
}

/** The run's result: it completed, stopped at its turn limit, or a guardrail blocked it. */
async function finish(life: Lifecycle, run: Run, status: AgentRunResult['status'], output: unknown, tripwire?: Tripwire): Promise<AgentRunResult> {
  await life.close(run, status, output, tripwire && `blocked by guardrail "${tripwire.guardrail}": ${tripwire.reason}`);
  return {
    kind: 'run',
    status,
    output: output ?? null,
    usage: run.usage,
    turns: run.turns,
    agent: run.agent.name,
    ...(tripwire && { blocked: tripwire }),
    ...(run.state.used && { state: run.state.values }),
    // A sub-agent's remembered approvals go back to its parent with its result.
    ...(run.feature(SubAgents)?.parent && run.approvals.remembered.length > 0 && { rememberedRules: [...run.approvals.remembered] }),
  };
}

function checkInput(input: AgentRunInput): void {
  checkAgentRunInput(input, workflowInfo().continuedFromExecutionRunId !== undefined);
}
