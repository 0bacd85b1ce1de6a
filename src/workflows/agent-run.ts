/**
 * The agent loop: one workflow per run. Model turns and tool calls are activities; the
 * conversation and the event log are workflow state, exposed by queries.
 */
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  proxyLocalActivities,
  proxySinks,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { AgentSpec } from '../core/agent-spec.js';
import { cutOffToolResult } from '../core/cut-off.js';
import { ErrorTypes } from '../core/errors.js';
import { EventLog } from '../core/event-log.js';
import { userMessage, type Message, type ToolCall, type ToolResultMessage } from '../core/messages.js';
import type {
  AgentRunInput,
  AgentRunResult,
  ContinuedState,
  NewRunEvent,
  RunState,
  RunStatus,
} from '../core/run.js';
import { addUsage, zeroUsage, type Usage } from '../core/usage.js';
import type { AgentActivities, ModelTurnResult } from './activity-types.js';
import {
  agentSearchAttribute,
  eventsQuery,
  statusQuery,
  statusSearchAttribute,
  transcriptQuery,
  type KeelSinks,
} from './api.js';
import { modelActivity, runToolCalls } from './scheduling.js';

/** Continue as new past this many history events, well before Temporal's limits. */
const DEFAULT_CONTINUE_AS_NEW_EVENTS = 10_000;

const { resolveAgent } = proxyLocalActivities<AgentActivities>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 3 },
  summary: 'resolve agent',
});

const { conversation } = proxySinks<KeelSinks>();

export async function agentRun(input: AgentRunInput): Promise<AgentRunResult> {
  let run: Run | undefined;
  // Queries are answered from the first workflow task on, also while the agent is resolved.
  registerQueries(input, () => run);
  try {
    checkInput(input);
    const spec = input.continued?.spec ?? (await resolveAgent(input.agent));
    run = new Run(spec, input.continued);
    if (!input.continued) {
      run.emit({ type: 'run.started', agent: spec.name, model: spec.model, input: input.input });
      run.append([userMessage(input.input)]);
    }
    // A run started by a client that did not set the search attributes (for example the
    // `temporal` CLI) sets them itself, once.
    if (workflowInfo().typedSearchAttributes.get(statusSearchAttribute) !== 'running') {
      upsertSearchAttributes([
        { key: agentSearchAttribute, value: spec.name },
        { key: statusSearchAttribute, value: 'running' },
      ]);
    }
    return await run.loop(input);
  } catch (err) {
    const status = isCancellation(err) ? 'cancelled' : 'failed';
    if (run) run.end(status, undefined, status === 'failed' ? innermost(err).message : undefined);
    else upsertSearchAttributes([{ key: statusSearchAttribute, value: status }]);
    throw status === 'cancelled' ? err : asRunFailure(err);
  }
}

class Run {
  readonly messages: Message[];
  readonly log: EventLog;
  turns: number;
  usage: Usage;
  outputAttempts: number;
  status: RunStatus = 'running';

  constructor(
    readonly spec: AgentSpec,
    carried?: ContinuedState,
  ) {
    this.messages = carried ? [...carried.messages] : [];
    this.log = new EventLog(carried?.events);
    this.turns = carried?.turns ?? 0;
    this.usage = carried?.usage ?? zeroUsage();
    this.outputAttempts = carried?.outputAttempts ?? 0;
    if (carried) conversation.append(0, this.messages);
  }

  state(): RunState {
    return {
      agent: this.spec.name,
      status: this.status,
      turns: this.turns,
      usage: this.usage,
      messages: this.messages.length,
      lastSeq: this.log.lastSeq,
    };
  }

  emit(event: NewRunEvent): void {
    this.log.append(event, new Date());
  }

  append(messages: Message[]): void {
    const start = this.messages.length;
    this.messages.push(...messages);
    conversation.append(start, messages);
  }

  async loop(input: AgentRunInput): Promise<AgentRunResult> {
    for (;;) {
      if (this.turns >= this.spec.maxTurns) {
        return this.finish('max_turns', lastAssistantText(this.messages));
      }
      if (shouldContinueAsNew(input)) {
        await condition(allHandlersFinished);
        this.emit({ type: 'run.continued', turns: this.turns });
        const carried: ContinuedState = {
          spec: this.spec,
          messages: this.messages,
          events: this.log.all(),
          turns: this.turns,
          usage: this.usage,
          outputAttempts: this.outputAttempts,
        };
        return await continueAsNew<typeof agentRun>({ ...input, continued: carried });
      }

      const turn = ++this.turns;
      this.emit({ type: 'turn.started', turn });
      // What the UI shows as the run's current details (served by a query: no history events).
      setCurrentDetails(`turn ${turn} of at most ${this.spec.maxTurns}: waiting for ${this.spec.model}`);
      const result = await modelActivity(this.spec, turn).modelTurn({
        agent: this.spec.name,
        turn,
        messageCount: this.messages.length,
      });
      this.usage = addUsage(this.usage, result.usage);
      this.append([result.message]);
      const toolCalls = result.message.toolCalls ?? [];
      this.emit({
        type: 'turn.finished',
        turn,
        text: result.message.content,
        toolCalls,
        usage: result.usage,
        ...(result.truncated && { truncated: true as const }),
      });

      if (toolCalls.length === 0) {
        const done = this.finalAnswer(turn, result);
        if (done) return done;
        continue;
      }

      for (const call of toolCalls) {
        this.emit({ type: 'tool.requested', turn, callId: call.id, tool: call.name, arguments: call.arguments });
      }
      if (result.truncated) {
        this.refuseCutOffCalls(turn, toolCalls);
        continue;
      }
      setCurrentDetails(`turn ${turn}: running ${toolCalls.map((c) => c.name).join(', ')}`);
      const results = await runToolCalls(this.spec, turn, toolCalls, {
        started: (call) => this.emit({ type: 'tool.started', turn, callId: call.id, tool: call.name }),
        finished: (r) =>
          this.emit({
            type: 'tool.finished',
            turn,
            callId: r.toolCallId,
            tool: r.toolName,
            result: r.content,
            isError: r.isError ?? false,
          }),
      });
      this.append(results);

      const stop = results.find((r) => !r.isError && this.spec.stopAtTools.includes(r.toolName));
      if (stop) return this.finish('completed', toolOutput(stop));
    }
  }

  /**
   * An answer cut off at the output token limit: none of its tool calls runs (the last one's
   * arguments are likely incomplete); the model gets an error result for each, and tries again.
   */
  private refuseCutOffCalls(turn: number, calls: ToolCall[]): void {
    const results = calls.map((call) => cutOffToolResult(call, this.spec.modelSettings.maxTokens));
    for (const r of results) {
      this.emit({ type: 'tool.finished', turn, callId: r.toolCallId, tool: r.toolName, result: r.content, isError: true });
    }
    this.append(results);
  }

  /** A turn without tool calls: the final answer, checked against the output schema if any. */
  private finalAnswer(turn: number, result: ModelTurnResult): AgentRunResult | undefined {
    if (!this.spec.outputSchema) return this.finish('completed', result.message.content);
    const check = result.output;
    if (check?.valid) return this.finish('completed', check.value);
    const error = check?.error ?? 'the model answered, but the worker did not check the answer';
    this.outputAttempts++;
    this.emit({ type: 'output.invalid', turn, error, attempt: this.outputAttempts });
    if (this.outputAttempts > this.spec.outputRetries) {
      throw ApplicationFailure.create({
        type: ErrorTypes.InvalidOutput,
        nonRetryable: true,
        message:
          `Agent "${this.spec.name}" gave no valid structured output after ${this.outputAttempts} attempts; ` +
          `last error: ${error}. Check the agent's instructions and output schema, or raise outputRetries.`,
      });
    }
    this.append([
      userMessage(
        `Your answer does not match the required output schema: ${error}\n` +
          'Answer again with only a JSON value that matches the schema.',
      ),
    ]);
    return undefined;
  }

  /** The run's result: it completed, or stopped at its turn limit. */
  finish(status: AgentRunResult['status'], output: unknown): AgentRunResult {
    this.end(status, output);
    return { status, output: output ?? null, usage: this.usage, turns: this.turns, agent: this.spec.name };
  }

  /** Records the end of the run: its status (one search attribute upsert) and the last event. */
  end(status: RunStatus, output?: unknown, error?: string): void {
    this.status = status;
    setCurrentDetails(`${status.replace('_', ' ')} after ${this.turns} ${this.turns === 1 ? 'turn' : 'turns'}`);
    upsertSearchAttributes([{ key: statusSearchAttribute, value: status }]);
    this.emit({
      type: 'run.finished',
      status,
      ...(output !== undefined && { output }),
      ...(error !== undefined && { error }),
    });
  }
}

function registerQueries(input: AgentRunInput, current: () => Run | undefined): void {
  setHandler(statusQuery, (): RunState => {
    const run = current();
    if (run) return run.state();
    const agent = typeof input?.agent === 'string' ? input.agent : '';
    return { agent, status: 'running', turns: 0, usage: zeroUsage(), messages: 0, lastSeq: 0 };
  });
  setHandler(transcriptQuery, (range) => current()?.messages.slice(range?.from ?? 0, range?.to) ?? []);
  setHandler(eventsQuery, (after) => current()?.log.after(after ?? 0) ?? []);
}

function checkInput(input: AgentRunInput): void {
  const problems: string[] = [];
  if (typeof input !== 'object' || input === null) {
    problems.push('the input must be a JSON object');
  } else {
    if (typeof input.agent !== 'string' || input.agent === '') problems.push('"agent" must be a non-empty string');
    if (typeof input.input !== 'string') problems.push('"input" must be a string (the prompt)');
  }
  if (problems.length > 0) {
    throw ApplicationFailure.create({
      type: 'KeelInvalidInput',
      nonRetryable: true,
      message: `Invalid agentRun input: ${problems.join('; ')}. Expected {"agent": "<name>", "input": "<prompt>"}.`,
    });
  }
}

function shouldContinueAsNew(input: AgentRunInput): boolean {
  const info = workflowInfo();
  const limit = input.options?.continueAsNewAfterEvents ?? DEFAULT_CONTINUE_AS_NEW_EVENTS;
  return info.continueAsNewSuggested || info.historyLength >= limit;
}

function lastAssistantText(messages: Message[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === 'assistant' && m.content) return m.content;
  }
  return null;
}

/** A tool that stops the run gives its result as the output: parsed when it is JSON. */
function toolOutput(result: ToolResultMessage): unknown {
  try {
    return JSON.parse(result.content);
  } catch {
    return result.content;
  }
}

/** The innermost failure, which is the one that says what went wrong. */
function innermost(err: unknown): Error {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e : new Error(String(err));
}

/**
 * Surface an activity's failure as the run's own failure, keeping its type, so the run fails
 * with the error that explains it rather than with a generic "activity failed".
 */
function asRunFailure(err: unknown): unknown {
  const root = innermost(err);
  if (root instanceof ApplicationFailure && root !== err) {
    return ApplicationFailure.create({
      message: root.message,
      type: root.type ?? undefined,
      nonRetryable: true,
      details: root.details ?? undefined,
      cause: err instanceof Error ? err : undefined,
    });
  }
  return err;
}
