/**
 * Handoffs: the model hands the conversation to another agent by calling its `transfer_to_<name>`
 * tool. The run goes on in the same workflow with the other agent's instructions, tools,
 * policy, guardrails and limits; the target's spec is resolved by an activity and recorded.
 */
// Types only: a run's workflow code imports this module, and zod must stay out of its bundle
// (src/core/schema-check.ts says why).
import type { z } from 'zod';
import type { JsonValue } from './json.js';
import type { Message } from './messages.js';

/** What the agent taking over sees of the conversation before the handoff (the conversation kept is whole). */
export type HandoffFilter = 'all' | 'no-tools' | 'transcript';
export const HANDOFF_FILTERS: readonly HandoffFilter[] = ['all', 'no-tools', 'transcript'];

export const DEFAULT_MAX_HANDOFFS = 10;

/** An agent named, not imported: allows cycles (A hands to B, B back to A). Resolved when a run hands off. */
export interface AgentRef {
  readonly kind: 'ref';
  readonly name: string;
}

export function ref(name: string): AgentRef {
  if (typeof name !== 'string' || name === '') throw new Error('ref() takes the name of an agent.');
  return { kind: 'ref', name };
}

/** What an `onHandoff` check gets. */
export interface HandoffContext {
  from: string;
  to: string;
  workflowId: string;
  context: JsonValue | undefined;
}

export interface HandoffOptions<S extends z.ZodType | undefined = undefined> {
  agent: { kind: 'agent'; name: string; spec: { description: string } } | AgentRef;
  /** Default `transfer_to_<agent>` (characters the providers refuse become `_`). */
  toolName?: string;
  /** What the model reads about when to hand off. Default: the agent's description. */
  description?: string;
  /** Arguments the model gives with the handoff, such as `{ reason, priority }`. */
  input?: S;
  /** May refuse the handoff: return a message for the model (or throw); return nothing to let it happen. */
  onHandoff?(input: S extends z.ZodType ? z.output<S> : Record<string, never>, ctx: HandoffContext): string | void | Promise<string | void>;
  /** What the agent taking over sees of the conversation so far. Default `all`. */
  inputFilter?: HandoffFilter;
}

export interface HandoffDefinition<S extends z.ZodType | undefined = z.ZodType | undefined> extends HandoffOptions<S> {
  readonly kind: 'handoff';
}

export function handoff<S extends z.ZodType | undefined = undefined>(options: HandoffOptions<S>): HandoffDefinition<S> {
  if (options.inputFilter !== undefined && !HANDOFF_FILTERS.includes(options.inputFilter)) {
    throw new Error(`Handoff to "${options.agent.name}": inputFilter must be one of ${HANDOFF_FILTERS.join(', ')}, got ${JSON.stringify(options.inputFilter)}.`);
  }
  return { ...options, kind: 'handoff' };
}

/** A handoff as the agent's spec records it. */
export interface HandoffSpec {
  /** The tool the model calls. */
  tool: string;
  /** The agent that takes over. */
  agent: string;
  filter: HandoffFilter;
  /** The source agent has an `onHandoff` check (run on the worker). */
  check: boolean;
}

export function handoffToolName(agent: string): string {
  return `transfer_to_${agent.replace(/[^a-zA-Z0-9_-]/g, '_')}`.slice(0, 64);
}

/**
 * The messages the agent taking over sees: those before `at` filtered, the rest as they are.
 * `no-tools` drops tool calls and their results; `transcript` nests the earlier conversation in
 * one user message, as a transcript.
 */
export function filterForHandoff(messages: Message[], at: number, filter: HandoffFilter): Message[] {
  if (filter === 'all' || at <= 0) return messages;
  const before = messages.slice(0, at);
  const after = messages.slice(at);
  if (filter === 'no-tools') {
    const kept: Message[] = [];
    for (const m of before) {
      if (m.role === 'tool') continue;
      if (m.role === 'assistant') {
        if (!m.content) continue;
        const { toolCalls: _dropped, ...rest } = m;
        kept.push(rest);
      } else kept.push(m);
    }
    return [...kept, ...after];
  }
  const lines = before.map((m) => {
    if (m.role === 'user') return `user: ${m.content}`;
    if (m.role === 'tool') return `tool ${m.toolName} result: ${m.content}`;
    const calls = (m.toolCalls ?? []).map((c) => ` [called ${c.name} ${c.arguments}]`).join('');
    return `assistant: ${m.content}${calls}`;
  });
  const transcript: Message = { role: 'user', content: `[The conversation so far, handed to you]\n${lines.join('\n')}` };
  return [transcript, ...after];
}
