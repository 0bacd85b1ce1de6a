/**
 * The contract other clients rely on: for each workflow type (`agentRun`, `agentMonitor`) its
 * input, result, signals, queries, Updates, statuses, events and failure types, as zod schemas.
 * `npm run contract` writes them as JSON Schema files (contract/*.schema.json) and the reference
 * page docs/contract.md; test/contract.test.ts fails when the committed files and these part.
 *
 * What keel checks on the way in is in schemas.ts (the workflows import it); what keel answers
 * is described here, and each schema is checked against the TypeScript type it describes. The
 * workflows do not import this module.
 */
import { z } from 'zod';
import type { PendingApproval, ApprovalReceipt } from './approval.js';
import type { BackgroundChild } from './background.js';
import type { ClientToolReceipt, PendingClientCall } from './client-tools.js';
import { ErrorTypes } from './errors.js';
import type { Tripwire } from './guardrails.js';
import type { Message, ToolCall } from './messages.js';
import type { LastTurn, MonitorPhase, MonitorResult, MonitorState, MonitorStopReason } from './monitor.js';
import type { AgentRunResult, EventPage, RunEvent, RunState, RunStatus, TranscriptPage } from './run.js';
import type { Checkpoint, RewindResult, SessionEndReason, SessionResult, SessionRunResult, SessionRunStatus, SessionState } from './session.js';
import type { StateSnapshot } from './state.js';
import {
  agentRunInputSchema,
  approvalDecisionSchema,
  backgroundReportSchema,
  clientToolResultSchema,
  injectInputSchema,
  monitorBudgetsSchema,
  monitorInputSchema,
  permissionModeSchema,
  endInputSchema,
  jsonValueSchema,
  newSessionInputSchema,
  rewindInputSchema,
  sendInputSchema,
  sessionInputSchema,
  stateValuesSchema,
  type Same,
} from './schemas.js';
import type { Usage } from './usage.js';

// ---------------------------------------------------------------------------------------------
// Statuses

export const runStatusSchema = z
  .enum(['running', 'awaiting_approval', 'completed', 'max_turns', 'blocked', 'failed', 'cancelled'])
  .describe("Where an agentRun is; also its KeelStatus search attribute's value.");

export const monitorStopReasonSchema = z
  .enum(['completed', 'max_turns', 'max_tokens', 'max_cost', 'wallclock', 'cancelled', 'retry_aborted', 'blocked', 'failed'])
  .describe('Why a monitor ended. `failed` fails the workflow; the others are its result.');

export const monitorPhaseSchema = z
  .enum(['running', 'sleeping', 'paused', 'awaiting_approval', ...monitorStopReasonSchema.options])
  .describe("Where an agentMonitor is; also its KeelStatus search attribute's value.");

/** Every value the `KeelStatus` search attribute takes, for runs and monitors. */
export const KEEL_STATUSES = [...new Set([...runStatusSchema.options, ...monitorPhaseSchema.options])];
export const keelStatusSchema = z.enum(KEEL_STATUSES as [string, ...string[]]).describe('Every value of the KeelStatus search attribute.');

export const sessionRunStatusSchema = z
  .enum(['running', 'awaiting_approval', 'completed', 'max_turns', 'blocked', 'failed', 'discarded'])
  .describe('Where a run of a session is.');
export const sessionEndReasonSchema = z.enum(['clear', 'logout', 'prompt_input_exit', 'other']).describe("Why a session ended, as Claude Code's SessionEnd names it.");

// ---------------------------------------------------------------------------------------------
// Pieces

export const usageSchema = z.object({ inputTokens: z.number(), outputTokens: z.number() }).describe('Tokens used.');
export const toolCallSchema = z
  .object({ id: z.string(), name: z.string(), arguments: z.string().describe('The raw JSON text the model produced.') })
  .describe('A tool call as the model asked for it.');
export const messageSchema = z
  .discriminatedUnion('role', [
    z.object({ role: z.literal('user'), content: z.string() }),
    z.object({ role: z.literal('assistant'), content: z.string(), toolCalls: z.array(toolCallSchema).optional() }),
    z.object({
      role: z.literal('tool'),
      toolCallId: z.string(),
      toolName: z.string(),
      content: z.string(),
      isError: z.boolean().optional(),
      truncatedFrom: z.number().optional(),
    }),
  ])
  .describe('One message of the conversation.');

const guardrailKindSchema = z.enum(['input', 'output', 'toolInput', 'toolOutput']);
export const tripwireSchema = z
  .object({ guardrail: z.string(), kind: guardrailKindSchema, reason: z.string(), callId: z.string().optional(), tool: z.string().optional() })
  .describe('What ended a blocked run.');

export const pendingApprovalSchema = z
  .object({
    callId: z.string(),
    tool: z.string(),
    arguments: z.record(z.string(), z.unknown()).describe('The arguments the call would run with.'),
    stage: z.string().describe('The stage that asked: permissions, hook, a middleware, or tool.'),
    reason: z.string(),
    since: z.string().describe('ISO time the call started waiting.'),
    expires: z.string().optional().describe('ISO time an approval timeout decides it.'),
    turn: z.number(),
    run: z.string().optional().describe("The sub-agent's run the call belongs to (decide it here all the same)."),
  })
  .describe('A call waiting for a decision.');

export const approvalReceiptSchema = z
  .object({ callId: z.string(), decision: z.enum(['allow', 'deny']), pending: z.number().describe('Calls still waiting.') })
  .describe('What the approve Update answers once the decision is recorded.');

const decisionSourceSchema = z.enum(['update', 'signal', 'approver', 'timeout', 'early']);

export const pendingClientCallSchema = z
  .object({
    callId: z.string(),
    tool: z.string(),
    arguments: z.record(z.string(), z.unknown()).describe('The arguments to run the call with.'),
    turn: z.number(),
    since: z.string().describe('ISO time the call was published.'),
    expires: z.string().describe('ISO time the call times out (the model then gets an error result).'),
    run: z.string().optional().describe("The sub-agent's run the call waits in, when it is not this run's own: send its answer there."),
  })
  .describe('A client tool\'s call waiting for a client to answer it.');

export const clientToolReceiptSchema = z
  .object({ callId: z.string(), pending: z.number().describe('Calls still waiting for a client.') })
  .describe('What the clientToolResult Update answers once the answer is recorded.');

const clientToolAnswererSchema = z.enum(['client', 'timeout']);

// ---------------------------------------------------------------------------------------------
// Events

const ev = <T extends string, S extends z.ZodRawShape>(type: T, shape: S, description?: string) => {
  const schema = z.object({ seq: z.number().int(), at: z.string().describe('ISO time, from the workflow clock.'), type: z.literal(type), ...shape });
  return description ? schema.describe(description) : schema;
};

const turn = z.number().int();
const callId = z.string();

/** Every event of a run's log, by `type`. `subagent.event` holds an event of a sub-agent's run. */
const eventUnion = z.discriminatedUnion('type', [
  ev('run.started', { agent: z.string(), model: z.string(), input: z.string() }),
  ev('turn.started', { turn, agent: z.string() }),
  ev('turn.finished', { turn, text: z.string(), toolCalls: z.array(toolCallSchema), usage: usageSchema, truncated: z.boolean().optional() }),
  ev('tool.requested', { turn, callId, tool: z.string(), arguments: z.string() }),
  ev('tool.started', { turn, callId, tool: z.string() }),
  ev('tool.finished', {
    turn,
    callId,
    tool: z.string(),
    result: z.string(),
    isError: z.boolean(),
    truncatedFrom: z.number().optional(),
    stage: z.string().optional().describe('The pipeline stage that answered, when it was not the tool.'),
    by: clientToolAnswererSchema.optional().describe("Who answered a client tool's call: the client, or its timeout."),
  }),
  ev(
    'client_tool.requested',
    { turn, callId, tool: z.string(), arguments: z.string(), expires: z.string(), run: z.string().optional() },
    "A client tool's call waits for a client attached to the run to answer it (the clientToolResult Update) until expires.",
  ),
  ev('output.invalid', { turn, error: z.string(), attempt: z.number() }),
  ev(
    'tool.decided',
    { turn, callId, tool: z.string(), stage: z.string(), decision: z.enum(['allow', 'ask', 'deny', 'rewrite']), reason: z.string() },
    'A stage of the pipeline decided a call, or rewrote its arguments.',
  ),
  ev('approval.requested', { turn, callId, tool: z.string(), stage: z.string(), reason: z.string(), arguments: z.string() }),
  ev('approval.decided', {
    turn,
    callId,
    tool: z.string(),
    decision: z.enum(['allow', 'deny']),
    by: decisionSourceSchema,
    reason: z.string().optional(),
    edited: z.boolean().optional(),
    remembered: z.string().optional(),
  }),
  ev('approval.rejected', { callId: callId.optional(), error: z.string() }, 'A decision that could not be applied: nothing changed.'),
  ev('signal.rejected', { signal: z.string(), error: z.string() }, 'A signal whose payload could not be decoded: recorded, not delivered; the run goes on.'),
  ev('permission.mode', { mode: permissionModeSchema, by: z.literal('signal') }),
  ev('state.changed', {
    turn: z.number().int(),
    keys: z.array(z.string()).describe('The keys set or deleted.'),
    version: z.number().int().describe("The state's version after the change (the state query answers it)."),
    callId: z.string().optional().describe('The call that wrote them (a sub-agent call: what its run wrote).'),
    tool: z.string().optional(),
  }),
  ev('handoff', { turn, from: z.string(), to: z.string(), callId, input: z.string().optional() }, 'The run was handed to another agent.'),
  ev('subagent.started', { turn, callId, agent: z.string(), workflowId: z.string() }),
  ev('subagent.finished', { turn, callId, agent: z.string(), workflowId: z.string(), status: z.string() }),
  // Written out, not through ev(): its spread would read the getter before the union exists.
  z
    .object({
      seq: z.number().int(),
      at: z.string().describe('ISO time, from the workflow clock.'),
      type: z.literal('subagent.event'),
      callId,
      depth: z.number().int(),
      workflowId: z.string(),
      get event(): z.ZodType<RunEvent> {
        return runEventSchema;
      },
    })
    .describe("An event of a sub-agent's run, forwarded into this log."),
  ev('background.spawned', { name: z.string(), workflowId: z.string(), goal: z.string(), taskQueue: z.string().optional() }),
  ev('background.report', { name: z.string(), kind: z.string(), text: z.string(), report: z.number().int() }),
  ev('background.stopped', { name: z.string(), reason: z.string() }),
  ev('guardrail.tripped', { guardrail: z.string(), kind: guardrailKindSchema, reason: z.string(), callId: callId.optional() }),
  ev('hook.failed', { event: z.string(), error: z.string(), callId: callId.optional() }, 'A hook failed without deciding: logged, the run goes on.'),
  ev('hook.context', { event: z.string(), text: z.string() }),
  ev('turn.continued', { turn, input: z.string() }, "The model answered and the agent's onTurnEnd gave input that continues the run."),
  ev('run.stop_condition', { turn, condition: z.string() }, 'A stopWhen condition held after the turn: the run ends completed.'),
  ev('run.continued', { turns: z.number().int() }),
  ev('run.finished', { status: z.union([runStatusSchema, monitorStopReasonSchema]), output: z.unknown().optional(), error: z.string().optional() }),
  ev('session.started', { source: z.enum(['startup', 'resume', 'clear', 'fork']), from: z.string().optional(), messages: z.number().int().optional() }, 'The session started (SessionStart); from: the session it was made from.'),
  ev('session.run_started', { run: z.string(), checkpoint: z.string().optional(), agent: z.string(), message: z.string() }, 'A message started a run of the session.'),
  ev('session.run_finished', { run: z.string(), status: sessionRunStatusSchema, error: z.string().optional() }),
  ev('session.resumed', { run: z.string() }, 'A failed run goes on from where it failed.'),
  ev('session.discarded', { run: z.string(), reason: z.string() }),
  ev('session.rewound', { checkpoint: z.string(), messages: z.number().int(), agent: z.string() }, "The checkpoint's message and all after it were removed."),
  ev('session.forked', { workflowId: z.string(), messages: z.number().int() }),
  ev('session.cleared', { workflowId: z.string() }),
  ev('session.ended', { reason: sessionEndReasonSchema }),
  ev('monitor.turn', { turn, prompt: z.string(), inbox: z.number().int() }),
  ev('monitor.sleep', { turn, until: z.string(), reason: z.string(), nextPrompt: z.string() }),
  ev('monitor.wake', { cause: z.enum(['timer', 'inject', 'wake', 'resume']) }),
  ev('monitor.injected', { message: z.string(), queued: z.number().int() }),
  ev('monitor.paused', {}),
  ev('monitor.resumed', {}),
  ev('monitor.warning', { message: z.string() }),
  ev('monitor.turn_failed', { turn, attempt: z.number().int(), error: z.string(), errorType: z.string().optional(), action: z.enum(['retry', 'skip', 'abort']) }),
]);
export const runEventSchema: z.ZodType<RunEvent> = eventUnion;

/** The event types, in the order of the union. */
export const RUN_EVENT_TYPES: readonly string[] = eventUnion.options.map((o) => o.shape.type.value);

// ---------------------------------------------------------------------------------------------
// Results and query answers

export const agentRunResultSchema = z
  .object({
    kind: z.literal('run'),
    status: z.enum(['completed', 'max_turns', 'blocked']),
    output: z.unknown().describe('The final answer: text, or the structured output; null when blocked.'),
    usage: usageSchema,
    turns: z.number().int(),
    agent: z.string().describe('The agent in charge at the end.'),
    blocked: tripwireSchema.optional().describe('What blocked a blocked run.'),
    state: stateValuesSchema.optional().describe("The run's state at its end, when it had any."),
    rememberedRules: z.array(z.string()).optional().describe("Allow rules the run's approvals remembered."),
  })
  .describe("agentRun's result. A failed run fails the workflow with an ApplicationFailure whose type is one of the failure types.");

export const runStateSchema = z
  .object({
    kind: z.literal('run'),
    agent: z.string(),
    status: runStatusSchema,
    turns: z.number().int(),
    usage: usageSchema,
    messages: z.number().int(),
    lastSeq: z.number().int(),
    pending: z.array(pendingApprovalSchema).optional().describe('Calls waiting for a decision (status awaiting_approval).'),
    clientCalls: z.array(pendingClientCallSchema).optional().describe("Client tools' calls waiting for a client."),
    permissionMode: permissionModeSchema.optional(),
    rememberedRules: z.array(z.string()).optional(),
  })
  .describe("agentRun's status query.");

export const transcriptRangeSchema = z.object({ from: z.number().int().optional(), to: z.number().int().optional() }).describe('Messages from `from` (included) to `to` (excluded).');

export const transcriptPageSchema = z
  .object({
    from: z.number().int(),
    messages: z.array(messageSchema),
    total: z.number().int(),
    firstHeld: z.number().int().describe('Messages before it are held by the execution previousRunId.'),
    previousRunId: z.string().optional(),
  })
  .describe('A bounded page (1 MB) of the messages this execution holds.');

export const eventPageSchema = z
  .object({
    events: z.array(runEventSchema),
    firstSeq: z.number().int().describe('Events before it are held by the execution previousRunId.'),
    lastSeq: z.number().int(),
    previousRunId: z.string().optional(),
  })
  .describe('A bounded page (1 MB) of the events after the given seq that this execution holds.');

const lastTurnSchema = z.object({
  turn: z.number().int(),
  at: z.string(),
  outcome: z.enum(['answered', 'scheduled', 'done', 'failed', 'skipped']),
  text: z.string().optional(),
  error: z.string().optional(),
});

export const monitorStateSchema = z
  .object({
    kind: z.literal('monitor'),
    agent: z.string(),
    status: monitorPhaseSchema.describe('Where the monitor is; also its KeelStatus.'),
    phase: monitorPhaseSchema.describe('Deprecated: the same as status.'),
    messages: z.number().int(),
    lastSeq: z.number().int(),
    nextWakeAt: z.string().nullable(),
    wakeReason: z.string().nullable(),
    turns: z.number().int(),
    usage: usageSchema,
    cost: z.number(),
    lastTurn: lastTurnSchema.nullable(),
    inbox: z.number().int(),
    budgets: monitorBudgetsSchema,
    pending: z.array(pendingApprovalSchema).optional(),
    clientCalls: z.array(pendingClientCallSchema).optional(),
  })
  .describe("agentMonitor's status query.");

export const monitorResultSchema = z
  .object({
    kind: z.literal('monitor'),
    status: monitorStopReasonSchema.exclude(['failed']),
    output: z.string().nullable().describe("report_done's detail, or why it stopped."),
    detail: z.string().nullable().describe('Deprecated: the same as output.'),
    turns: z.number().int(),
    usage: usageSchema,
    cost: z.number(),
    agent: z.string(),
    state: stateValuesSchema.optional().describe("The monitor's state at its end, when it had any."),
  })
  .describe("agentMonitor's result.");

export const sessionRunResultSchema = z
  .object({
    run: z.string(),
    status: sessionRunStatusSchema,
    checkpoint: z.string().optional().describe('The checkpoint of its message, once the message is in the conversation.'),
    agent: z.string().describe('The agent in charge at its end.'),
    turns: z.number().int(),
    usage: usageSchema,
    answer: z.number().int().optional().describe('The transcript index of the message holding the final answer (its text is stored once, there).'),
    output: jsonValueSchema.optional().describe('The structured output (an agent with an output schema, or a stop tool).'),
    error: z.string().optional().describe('Why it failed or what blocked it.'),
  })
  .describe('A run of a session: one message.');

export const checkpointSchema = z
  .object({ id: z.string(), message: z.string().describe('The message sent (its first 500 characters).'), at: z.string(), agent: z.string().describe('The agent that answered it.') })
  .describe('A point to rewind to: one per run that added a user message, the last 100 kept.');

export const sessionStateSchema = z
  .object({
    kind: z.literal('session'),
    agent: z.string().describe('The agent that answers the next message.'),
    busy: z.boolean().describe('A run is in progress or waits for approval.'),
    status: z.enum(['idle', 'running', 'awaiting_approval', 'failed', 'ended']),
    messages: z.number().int(),
    checkpoints: z.array(checkpointSchema),
    pending: z.array(pendingApprovalSchema),
    run: sessionRunResultSchema.optional().describe('The current run, or the last one.'),
    ended: sessionEndReasonSchema.optional(),
    runs: z.number().int(),
    turns: z.number().int(),
    usage: usageSchema,
    lastSeq: z.number().int(),
    state: z.record(z.string(), jsonValueSchema),
  })
  .describe("agentSession's status query.");

export const sessionResultSchema = z
  .object({
    kind: z.literal('session'),
    status: z.literal('completed'),
    reason: sessionEndReasonSchema,
    output: z.null(),
    agent: z.string(),
    runs: z.number().int(),
    messages: z.number().int(),
    turns: z.number().int(),
    usage: usageSchema,
  })
  .describe("agentSession's result, once the end Update ends it.");

export const rewindResultSchema = z
  .object({ checkpoint: z.string(), message: z.string().describe('The message removed, to edit and send again.'), messages: z.number().int(), agent: z.string() })
  .describe('What rewind answers.');
export const stateSnapshotSchema = z
  .object({ version: z.number().int().describe('One more with each change.'), values: stateValuesSchema })
  .describe("The state query's answer: the run's state.");

const agentSpecSchema = z
  .custom<object>((v) => typeof v === 'object')
  .describe("The agent spec the run recorded (keel's own shape; see AgentSpec in the TypeScript types).");

const workerProblemSchema = z.object({ message: z.string(), type: z.string() });

export const backgroundChildSchema = z.object({
  name: z.string(),
  workflowId: z.string(),
  goal: z.string(),
  status: z.enum(['running', 'completed', 'failed', 'stopped']),
  spawnedAt: z.string(),
  taskQueue: z.string().optional(),
  lastReport: backgroundReportSchema.optional(),
});

// ---------------------------------------------------------------------------------------------
// The interfaces

export interface Operation {
  description: string;
  /** The arguments, in order. */
  args: z.ZodType[];
  /** What a query or an Update answers. */
  result?: z.ZodType;
  /** keel's own, between its workflows and activities: a client does not send it. */
  internal?: boolean;
}

export interface WorkflowContract {
  workflowType: string;
  description: string;
  input: z.ZodType;
  result: z.ZodType;
  statuses: z.ZodEnum;
  signals: Record<string, Operation>;
  queries: Record<string, Operation>;
  updates: Record<string, Operation>;
}

const common = {
  queries: {
    transcript: { description: 'A bounded page of the messages in the range that this execution holds.', args: [transcriptRangeSchema.optional()], result: transcriptPageSchema },
    events: { description: 'A bounded page of the events with seq greater than the argument (default 0), of those this execution holds.', args: [z.number().int().optional()], result: eventPageSchema },
    spec: { description: 'The spec the run recorded with this fingerprint, or null.', args: [z.string()], result: agentSpecSchema.nullable() },
    clientToolCalls: { description: "Client tools' calls waiting for a client, with their arguments.", args: [], result: z.array(pendingClientCallSchema) },
    state: { description: "The run's state (its values and version): what its tools, hooks and middleware read and write.", args: [], result: stateSnapshotSchema },
  },
  signals: {
    approve: { description: 'A decision on a waiting call. A bad one is recorded as an approval.rejected event; it never fails the run.', args: [approvalDecisionSchema] },
    setPermissionMode: { description: "Changes the run's permission mode.", args: [permissionModeSchema] },
    workerProblem: { description: 'From the model activity to its own run: a worker problem that holds the run up.', args: [workerProblemSchema], internal: true },
    subAgentPending: {
      description: "From a sub-agent's run to its parent: the calls waiting in it.",
      args: [z.object({ workflowId: z.string(), pending: z.array(pendingApprovalSchema) })],
      internal: true,
    },
    subAgentEvents: {
      description: "From a sub-agent's run to its parent: events to add to the parent's log.",
      args: [z.object({ workflowId: z.string(), callId: z.string(), depth: z.number().int(), events: z.array(runEventSchema) })],
      internal: true,
    },
    subAgentClientCalls: {
      description: "From a sub-agent's run to its parent: the client tools' calls waiting in it.",
      args: [z.object({ workflowId: z.string(), calls: z.array(pendingClientCallSchema) })],
      internal: true,
    },
    backgroundReport: { description: 'From a background agent to the run that started it: an alert, or its end.', args: [backgroundReportSchema], internal: true },
  },
  updates: {
    approve: {
      description: 'A decision on a waiting call. Its validator refuses an unknown or decided call, or edited arguments that fail the tool schema, before anything is written.',
      args: [approvalDecisionSchema],
      result: approvalReceiptSchema,
    },
    clientToolResult: {
      description:
        "A client's answer to a client tool's call: { callId, output } or { callId, error }. Its validator refuses an unknown or answered call, or an output that fails the tool's output schema. Use the Update ID clientToolResult:<callId> so a retry applies once.",
      args: [clientToolResultSchema],
      result: clientToolReceiptSchema,
    },
  },
} satisfies Pick<WorkflowContract, 'signals' | 'queries' | 'updates'>;

export const agentRunContract: WorkflowContract = {
  workflowType: 'agentRun',
  description: 'One agent run: model turns and tool calls until an answer, a limit, or a guardrail.',
  input: agentRunInputSchema,
  result: agentRunResultSchema,
  statuses: runStatusSchema,
  signals: common.signals,
  queries: { status: { description: "The run's status: where it is, its totals, the calls waiting.", args: [], result: runStateSchema }, ...common.queries },
  updates: common.updates,
};

export const agentMonitorContract: WorkflowContract = {
  workflowType: 'agentMonitor',
  description: 'A monitor: an agent that takes turn after turn, sleeping on a durable timer between them, until it reports done or a budget ends it.',
  input: monitorInputSchema,
  result: monitorResultSchema,
  statuses: monitorPhaseSchema,
  signals: {
    ...common.signals,
    inject: { description: 'Queues a message for the next turn (an [Inbox] block) and wakes a sleeping monitor.', args: [injectInputSchema] },
    wake: { description: 'Wakes a sleeping monitor now.', args: [] },
    pause: { description: 'Pauses at the next turn boundary; a sleeping monitor stays asleep past its wake time.', args: [] },
    resume: { description: 'Resumes a paused monitor.', args: [] },
    stop: { description: 'Ends the monitor: its current turn is cancelled cleanly and it ends cancelled.', args: [z.string().optional().describe('Why.')] },
  },
  queries: { status: { description: "The monitor's status: phase, next wake, totals.", args: [], result: monitorStateSchema }, ...common.queries },
  updates: {
    ...common.updates,
    inject: { description: 'The inject signal as an Update: answers once the message is queued.', args: [injectInputSchema], result: z.object({ queued: z.number().int() }) },
  },
};

export const sessionStatusSchema = z.enum(['running', 'awaiting_approval', 'completed', 'failed', 'cancelled']).describe("An agentSession's KeelStatus: running while it is open (idle between messages).");

const newSession = { args: [newSessionInputSchema.optional()], result: z.object({ workflowId: z.string() }) };

export const agentSessionContract: WorkflowContract = {
  workflowType: 'agentSession',
  description: 'A session: a conversation of many messages, each one run of the agent in charge, serialized, with checkpoints, rewind, fork and clear.',
  input: sessionInputSchema,
  result: sessionResultSchema,
  statuses: sessionStatusSchema,
  signals: common.signals,
  queries: { status: { description: "The session's status: the agent in charge, busy, messages, checkpoints, pending calls.", args: [], result: sessionStateSchema }, ...common.queries },
  updates: {
    ...common.updates,
    send: { description: "A message for the agent in charge: one run. Answers its result (or with wait false, its ID at once). Refused while a run is in progress or waits for approval.", args: [sendInputSchema], result: sessionRunResultSchema },
    result: { description: 'Waits for a run of the session (by ID) and answers its result.', args: [z.string()], result: sessionRunResultSchema },
    rewind: { description: "Removes a checkpoint's message and all after it; the checkpoint's agent is in charge again. Answers the message. Refused while busy.", args: [rewindInputSchema], result: rewindResultSchema },
    fork: { description: "Starts a new session with this one's conversation, state and checkpoints. Refused while busy.", ...newSession },
    clear: { description: "Starts a new empty session with this one's state; this one ends (SessionEnd clear) and is kept. Refused while busy.", ...newSession },
    resume: { description: 'Runs a failed run again from where it failed. Refused when no run failed.', args: [z.object({ wait: z.boolean().optional() }).optional()], result: sessionRunResultSchema },
    discard: { description: 'Gives up the current run: a failed one, one waiting for approval (its calls answered as not run), or one in progress (cancelled).', args: [], result: sessionRunResultSchema },
    end: { description: 'Ends the session: SessionEnd hooks with the reason, then the workflow completes.', args: [endInputSchema.optional()], result: z.object({ reason: z.string() }) },
  },
};

export const CONTRACTS = [agentRunContract, agentMonitorContract, agentSessionContract];

/** What each failure type means, from the comments of ErrorTypes (kept in step by the contract test). */
export const ERROR_TYPES: readonly string[] = Object.values(ErrorTypes);

/** The search attributes keel sets on every run. */
export const SEARCH_ATTRIBUTES = {
  KeelAgent: { type: 'Keyword', description: 'The agent the run started with.' },
  KeelStatus: { type: 'Keyword', description: 'Where the run is: one of the statuses.', values: KEEL_STATUSES },
} as const;

// ---------------------------------------------------------------------------------------------
// The types, checked against the schemas.

type Expect<T extends true> = T;
export type ContractChecks = [
  Expect<Same<z.output<typeof runStatusSchema>, RunStatus>>,
  Expect<Same<z.output<typeof monitorStopReasonSchema>, MonitorStopReason>>,
  Expect<Same<z.output<typeof monitorPhaseSchema>, MonitorPhase>>,
  Expect<Same<z.output<typeof usageSchema>, Usage>>,
  Expect<Same<z.output<typeof toolCallSchema>, ToolCall>>,
  Expect<Same<z.output<typeof messageSchema>, Message>>,
  Expect<Same<z.output<typeof tripwireSchema>, Tripwire>>,
  Expect<Same<z.output<typeof pendingApprovalSchema>, PendingApproval>>,
  Expect<Same<z.output<typeof approvalReceiptSchema>, ApprovalReceipt>>,
  Expect<Same<z.output<typeof pendingClientCallSchema>, PendingClientCall>>,
  Expect<Same<z.output<typeof clientToolReceiptSchema>, ClientToolReceipt>>,
  Expect<Same<z.output<typeof agentRunResultSchema>, AgentRunResult>>,
  Expect<Same<z.output<typeof runStateSchema>, RunState>>,
  Expect<Same<z.output<typeof transcriptPageSchema>, TranscriptPage>>,
  Expect<Same<z.output<typeof eventPageSchema>, EventPage>>,
  Expect<Same<z.output<typeof eventUnion>, RunEvent>>,
  Expect<Same<z.output<typeof lastTurnSchema>, LastTurn>>,
  Expect<Same<z.output<typeof monitorStateSchema>, MonitorState>>,
  Expect<Same<z.output<typeof monitorResultSchema>, MonitorResult>>,
  Expect<Same<z.output<typeof backgroundChildSchema>, BackgroundChild>>,
  Expect<Same<z.output<typeof sessionRunStatusSchema>, SessionRunStatus>>,
  Expect<Same<z.output<typeof sessionEndReasonSchema>, SessionEndReason>>,
  Expect<Same<z.output<typeof sessionRunResultSchema>, SessionRunResult>>,
  Expect<Same<z.output<typeof checkpointSchema>, Checkpoint>>,
  Expect<Same<z.output<typeof sessionStateSchema>, SessionState>>,
  Expect<Same<z.output<typeof sessionResultSchema>, SessionResult>>,
  Expect<Same<z.output<typeof rewindResultSchema>, RewindResult>>,
  Expect<Same<z.output<typeof stateSnapshotSchema>, StateSnapshot>>,
];
