/**
 * A run's state inside one execution of the workflow: the agent in charge and the specs it
 * recorded, the messages and events this execution holds, counters. Exposed by queries and
 * carried, small, across continue-as-new.
 */
import { proxySinks, workflowInfo } from '@temporalio/workflow';
import type { AgentSpec } from '../core/agent-spec.js';
import { EventLog } from '../core/event-log.js';
import { CONTINUE_CUT_OFF_ANSWER } from '../core/cut-off.js';
import type { JsonValue } from '../core/json.js';
import { pageWithin } from '../core/limits.js';
import type { AssistantMessage, Message, ToolCall } from '../core/messages.js';
import type { ToolSpec } from '../core/agent-spec.js';
import type { ContinuedState, EventPage, MessageSegment, NewRunEvent, RunEvent, RunState, RunStatus, TranscriptPage } from '../core/run.js';
import type { StateChanges, StateValues } from '../core/state.js';
import { specHash } from '../core/spec-hash.js';
import type { ToolStage } from '../core/tool-pipeline.js';
import { zeroUsage, type Usage } from '../core/usage.js';
import type { KeelSinks, TranscriptRange } from './api.js';
import { Approvals } from './approvals.js';
import { ClientTools } from './client-tools.js';
import type { PendingClientCall } from '../core/client-tools.js';
import type { RunFeature } from './feature.js';
import { State } from './state.js';

const { conversation } = proxySinks<KeelSinks>();

/** ContinuedState as runs recorded it before continue-as-new stopped carrying everything. */
interface ContinuedStateV1 {
  spec: AgentSpec;
  messages: Message[];
  events: EventPage['events'];
  turns: number;
  usage: Usage;
  outputAttempts: number;
}

export class Run {
  /** The agent in charge: the one whose model answers the next turn. */
  agent: AgentSpec;
  private agentHash: string;
  /** Every spec the run recorded, by fingerprint: what the model activity asks for. */
  private readonly specs = new Map<string, AgentSpec>();
  /** The messages this execution holds: `messages[i]` is message `firstMessage + i` of the run. */
  private readonly messages: Message[];
  readonly firstMessage: number;
  /** Messages of earlier executions this one was handed on (a monitor's view), by index. */
  private readonly handed = new Map<number, Message>();
  readonly log: EventLog;
  turns: number;
  usage: Usage;
  outputAttempts: number;
  /** The last assistant text, the output of a run that stops at its turn limit. */
  lastAnswer: string | null;
  /** The pieces of an answer cut off at the token limit, while the model continues it. */
  partialAnswer: string;
  status: RunStatus = 'running';
  /** The first message the model sees after the first one (compaction); 0: all of them. */
  viewFrom = 0;
  /** A Stop hook sent the model back to work: the next Stop hook is told so (Claude Code's stop_hook_active). */
  stopHookActive = false;
  /** Calls waiting for a decision, the permission mode, remembered rules. */
  readonly approvals: Approvals;
  /** The run's state: what its tools, hooks, middleware and instructions read and write; handoff targets share it. */
  readonly state: State;
  /** The state's version the agent in charge's instructions were evaluated with. */
  instructionsAt: number;
  /** Hears each event as it is logged (the live stream publishes it). */
  onEvent: ((event: RunEvent) => void) | undefined;
  /** The features the driver composed, in pipeline order (see feature.ts). */
  private readonly features: readonly RunFeature[];
  /** Tools the features answer themselves, part of every spec the run records. */
  private readonly featureTools: ToolSpec[];

  private constructor(
    agent: AgentSpec,
    readonly context: JsonValue | undefined,
    carried: Partial<ContinuedState> & { specs?: AgentSpec[] },
    features: readonly RunFeature[],
    held: { messages?: Message[]; events?: EventPage['events'] } = {},
  ) {
    this.state = new State(carried.state, carried.stateVersion);
    this.instructionsAt = carried.instructionsAt ?? this.state.version;
    for (const spec of carried.specs ?? []) this.specs.set(specHash(spec), spec);
    this.features = features;
    this.featureTools = features.flatMap((f) => f.tools?.(agent) ?? []);
    this.agent = this.withFeatureTools(agent);
    this.agentHash = this.record(this.agent);
    this.messages = held.messages ? [...held.messages] : [];
    this.firstMessage = held.messages ? 0 : (carried.messages ?? 0);
    for (const segment of carried.carried ?? []) segment.messages.forEach((m, i) => this.handed.set(segment.start + i, m));
    this.log = new EventLog(held.events ?? [], carried.lastSeq ?? 0);
    this.turns = carried.turns ?? 0;
    this.usage = carried.usage ?? zeroUsage();
    this.outputAttempts = carried.outputAttempts ?? 0;
    this.lastAnswer = carried.lastAnswer ?? null;
    this.partialAnswer = carried.partialAnswer ?? '';
    this.approvals = new Approvals(this, { mode: carried.permissionMode, remembered: carried.remembered });
  }

  /** The features meet the run, once it is whole. */
  private attachFeatures(): this {
    for (const f of this.features) f.attach?.(this);
    return this;
  }

  /** The pipeline stages of the run's features, in order. */
  stages(): ToolStage[] {
    return this.features.flatMap((f) => (f.stage ? [f.stage] : []));
  }

  /** The feature of this class, when the driver composed one. */
  feature<F extends RunFeature>(type: abstract new (...args: never[]) => F): F | undefined {
    return this.features.find((f): f is F => f instanceof type);
  }

  /** Each feature, in order, for the lifecycle's calls around turns and at the end. */
  get composed(): readonly RunFeature[] {
    return this.features;
  }

  /**
   * A new run of the agent, with the driver's features in pipeline order. The features' own tools
   * are part of the spec it records (and of every spec a handoff records later).
   */
  static start(agent: AgentSpec, context: JsonValue | undefined, features: readonly RunFeature[] = [], start: { state?: StateValues; remembered?: string[] } = {}): Run {
    return new Run(agent, context, { ...(start.state && { state: start.state }), ...(start.remembered?.length && { remembered: start.remembered }) }, features).attachFeatures();
  }

  /** The next execution of a run that continued as new. */
  static resume(carried: ContinuedState | ContinuedStateV1, features: readonly RunFeature[] = []): Run {
    const previous = workflowInfo().continuedFromExecutionRunId;
    if ('spec' in carried) {
      // Recorded by an earlier version, which carried the whole conversation and log.
      const { turns, usage, outputAttempts } = carried;
      const run = new Run(carried.spec, undefined, { turns, usage, outputAttempts }, features, { messages: carried.messages, events: carried.events });
      conversation.append(0, carried.messages);
      return run.attachFeatures();
    }
    const agent = (carried.agentSpec !== undefined ? carried.specs.find((s) => specHash(s) === carried.agentSpec) : undefined) ?? carried.specs.find((s) => s.name === carried.agent) ?? carried.specs[0]!;
    // The worker's cached conversation of the earlier execution is this one's.
    if (previous) conversation.continued(previous);
    if (carried.carried?.length) conversation.carried(carried.carried);
    return new Run(agent, carried.context, carried, features).attachFeatures();
  }

  /** The fingerprint of the agent in charge's recorded spec. */
  get specHash(): string {
    return this.agentHash;
  }

  /**
   * Hands the run to another agent (a handoff): its spec is recorded, the next turn is its. The
   * features' own tools (a monitor's report_done) are added to it: they go wherever the run goes.
   */
  handOff(spec: AgentSpec): void {
    this.agent = this.withFeatureTools(spec);
    this.agentHash = this.record(this.agent);
    this.instructionsAt = this.state.version;
  }

  /**
   * The agent in charge's instructions, evaluated again with the state as it is now: its spec is
   * recorded anew, and the one it replaces (evaluated with an earlier state) is dropped.
   */
  reinstruct(instructions: string): void {
    const before = this.agentHash;
    this.agent = { ...this.agent, instructions };
    this.agentHash = this.record(this.agent);
    this.instructionsAt = this.state.version;
    if (before !== this.agentHash) this.specs.delete(before);
  }

  private withFeatureTools(spec: AgentSpec): AgentSpec {
    const missing = this.featureTools.filter((t) => !spec.tools.some((s) => s.name === t.name));
    return missing.length > 0 ? { ...spec, tools: [...spec.tools, ...missing] } : spec;
  }

  spec(hash: string): AgentSpec | null {
    return this.specs.get(hash) ?? null;
  }

  private record(spec: AgentSpec): string {
    const hash = specHash(spec);
    this.specs.set(hash, spec);
    return hash;
  }

  get messageCount(): number {
    return this.firstMessage + this.messages.length;
  }

  /** Drops the messages from `count` on (a failed turn's), which this execution must hold. */
  rollback(count: number): void {
    if (count < this.firstMessage || count > this.messageCount) throw new Error(`Cannot roll back to message ${count}.`);
    this.messages.length = count - this.firstMessage;
  }

  /**
   * The calls of the last assistant message that have no result yet (a run given up while they
   * waited or after it failed): a conversation must answer each call before it goes on.
   */
  openCalls(): ToolCall[] {
    const i = this.messages.findLastIndex((m) => m.role === 'assistant');
    const calls = i >= 0 ? ((this.messages[i] as AssistantMessage).toolCalls ?? []) : [];
    const answered = new Set(this.messages.slice(i + 1).flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])));
    return calls.filter((c) => !answered.has(c.id));
  }

  /** Size of the messages from `start` on (held by this execution), in characters of JSON. */
  charsSince(start: number): number {
    return this.messages.slice(Math.max(0, start - this.firstMessage)).reduce((n, m) => n + JSON.stringify(m).length, 0);
  }

  /**
   * Replaces a blocked answer (an output guardrail tripped) with a marker in the transcript: the
   * result of the stop tool `toolCallId` when the answer was one; else the last assistant answer
   * and, when it was cut off at the token limit and continued, its earlier pieces too.
   */
  withholdAnswer(marker: string, toolCallId?: string): void {
    if (toolCallId !== undefined) {
      const i = this.messages.findLastIndex((m) => m.role === 'tool' && m.toolCallId === toolCallId);
      if (i >= 0) this.messages[i] = { ...this.messages[i]!, content: marker };
    } else {
      let i = this.messages.findLastIndex((m) => m.role === 'assistant');
      while (i >= 0) {
        this.messages[i] = { ...this.messages[i]!, content: marker };
        const before = this.messages[i - 1];
        if (before?.role !== 'user' || before.content !== CONTINUE_CUT_OFF_ANSWER || this.messages[i - 2]?.role !== 'assistant') break;
        i -= 2;
      }
    }
    this.lastAnswer = marker;
  }

  append(messages: Message[]): void {
    const start = this.messageCount;
    this.messages.push(...messages);
    conversation.append(start, messages);
  }

  emit(event: NewRunEvent): void {
    const logged = this.log.append(event, new Date());
    this.onEvent?.(logged);
  }

  /** Applies what a call (or a sub-agent) wrote to the state, and says so in the log when it changed something. */
  changeState(changes: StateChanges | undefined, by: { turn: number; callId?: string; tool?: string }): void {
    if (changes === undefined) return;
    const keys = this.state.apply(changes);
    if (keys.length === 0) return;
    this.emit({ type: 'state.changed', turn: by.turn, keys, version: this.state.version, ...(by.callId && { callId: by.callId }), ...(by.tool && { tool: by.tool }) });
  }

  /** The `status` query's answer. */
  statusAnswer(): RunState {
    return {
      kind: 'run',
      agent: this.agent.name,
      status: this.status,
      turns: this.turns,
      usage: this.usage,
      messages: this.messageCount,
      lastSeq: this.log.lastSeq,
      ...(this.approvals.waiting > 0 && { pending: this.approvals.list() }),
      ...clientCallsOf(this),
      ...((this.agent.permissions || this.approvals.mode !== 'default') && { permissionMode: this.approvals.mode }),
      ...(this.approvals.remembered.length > 0 && { rememberedRules: [...this.approvals.remembered] }),
    };
  }

  transcriptPage(range: TranscriptRange = {}): TranscriptPage {
    const total = this.messageCount;
    const from = Math.max(range.from ?? 0, this.firstMessage);
    const to = Math.min(range.to ?? total, total);
    const messages = pageWithin(this.messages.slice(from - this.firstMessage, Math.max(from, to) - this.firstMessage));
    return { from, messages, total, firstHeld: this.firstMessage, ...previousRun() };
  }

  eventPage(after = 0): EventPage {
    return {
      events: pageWithin(this.log.after(after)),
      firstSeq: this.log.firstSeq,
      lastSeq: this.log.lastSeq,
      ...previousRun(),
    };
  }

  /**
   * What the next execution needs: references and counters, not the conversation; with `view`
   * (a driver whose model sees a view bounded by a budget: a monitor), also the messages of that
   * view, so that the next turn reads them from the new execution alone.
   */
  carry(options: { view?: boolean } = {}): ContinuedState {
    const carried = options.view ? this.carriedView() : [];
    return {
      agent: this.agent.name,
      specs: [...this.specs.values()],
      ...(this.specs.size > 1 && { agentSpec: this.agentHash }),
      ...(this.instructionsAt !== this.state.version && { instructionsAt: this.instructionsAt }),
      ...(this.context !== undefined && { context: this.context }),
      messages: this.messageCount,
      lastSeq: this.log.lastSeq,
      turns: this.turns,
      usage: this.usage,
      outputAttempts: this.outputAttempts,
      lastAnswer: this.lastAnswer,
      ...(this.partialAnswer !== '' && { partialAnswer: this.partialAnswer }),
      ...(this.approvals.mode !== (this.agent.permissions?.mode ?? 'default') && { permissionMode: this.approvals.mode }),
      ...(this.approvals.remembered.length > 0 && { remembered: [...this.approvals.remembered] }),
      ...this.state.carry(),
      ...Object.assign({}, ...this.features.map((f) => f.carry?.() ?? {})),
      ...(carried.length > 0 && { carried }),
    };
  }

  /** The model's view (the first message, then from `viewFrom` on), as segments; none past CARRY_CHARS. */
  private carriedView(): MessageSegment[] {
    const count = this.messageCount;
    const wanted = this.viewFrom > 0 ? [0, ...range(this.viewFrom, count)] : range(0, count);
    const segments: MessageSegment[] = [];
    let chars = 0;
    for (const i of wanted) {
      const m = i >= this.firstMessage ? this.messages[i - this.firstMessage] : this.handed.get(i);
      if (!m) continue;
      chars += JSON.stringify(m).length;
      if (chars > CARRY_CHARS) return [];
      const last = segments.at(-1);
      if (last && last.start + last.messages.length === i) last.messages.push(m);
      else segments.push({ start: i, messages: [m] });
    }
    return segments;
  }
}

/**
 * At most this much of a view is carried (its JSON, in characters; a monitor's default budget
 * is 200,000; within 2 MB, the payload limit, whatever the characters): past it the model activity
 * reads the view from the earlier executions instead.
 */
const CARRY_CHARS = 500_000;

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
}

/** The status' list of calls waiting for a client, when there are any. */
export function clientCallsOf(run: Run | undefined): { clientCalls?: PendingClientCall[] } {
  const calls = run?.feature(ClientTools)?.list() ?? [];
  return calls.length > 0 ? { clientCalls: calls } : {};
}

function previousRun(): { previousRunId?: string } {
  const previous = workflowInfo().continuedFromExecutionRunId;
  return previous ? { previousRunId: previous } : {};
}
