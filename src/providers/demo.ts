/**
 * An offline, deterministic model for demos and tests: it needs no API key and no network.
 *
 * - Last message from the user, and the agent has tools: it finds the place names in the
 *   message (capitalized words) and calls every tool that takes exactly one required string
 *   argument (say `get_weather({city})`) once per place, all in one turn.
 *   Tools that need approval are left out of that.
 * - Last messages are tool results: when the agent has a tool that needs approval and takes one
 *   string argument (say `send_postcard({message})`), it calls it once, with a short summary of
 *   what it found, so every run of the demo shows an approval. Then it answers with one line per
 *   place gathering its results, and one for that call (JSON when the agent has an output schema).
 * - Otherwise it echoes the question.
 * - Run as a monitor (it has `schedule_next_turn` and `report_done`), it looks again every
 *   10 seconds, three times in all, then reports done with what it found last.
 *
 * The same request always gets the same response.
 */
import type { JsonSchema } from '../core/json-schema.js';
import type { Message, ToolCall, ToolResultMessage } from '../core/messages.js';
import type { ModelProvider, ModelRequest, ModelResponse } from '../core/model.js';
import type { ToolSpec } from '../core/agent-spec.js';

/** Capitalized words that are not place names. */
const NOT_PLACES = new Set(
  [
    // question and request words
    'what', "what's", 'whats', 'how', "how's", 'is', 'are', 'was', 'were', 'tell', 'please', 'and', 'the', 'in', 'at',
    'on', 'of', 'for', 'to', 'from', 'by', 'with', 'about', 'can', 'could', 'would', 'will', 'should', 'do', 'does',
    'did', 'give', 'show', 'compare', 'check', 'get', 'find', 'look', 'list', 'also', 'then', 'which', 'where', 'when',
    'who', 'why', 'whether', 'or', 'but', 'both', 'either', 'vs', 'versus', 'between', 'a', 'an', 'any', 'some', 'all',
    'i', "i'm", "i'd", 'me', 'my', 'we', 'our', 'you', 'your', 'it', 'its', "it's", 'this', 'that', 'these', 'those',
    'there', 'here', 'hello', 'hi', 'hey', 'thanks', 'thank', 'ok', 'okay', 'yes', 'no', 'let', "let's", 'lets', 'now',
    'right', 'current', 'currently', 'today', 'tonight', 'tomorrow', 'yesterday', 'weather', 'time', 'local',
    'temperature', 'forecast', 'city', 'cities', 'if', 'so', 'like', 'need', 'want', 'know', 'answer', 'reply', 'use',
    'json', 'api', 'ai', 'utc', 'gmt', 'inbox', 'also',
    // days and months
    'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'january', 'february', 'march',
    'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december',
  ],
);

/** Place names in a text: runs of capitalized words ("Paris", "New York"), in order, without repeats. */
export function findPlaces(text: string): string[] {
  const places: string[] = [];
  let run: string[] = [];
  const flush = () => {
    if (run.length > 0) {
      const name = run.join(' ');
      if (!places.includes(name)) places.push(name);
      run = [];
    }
  };
  // Words (letters, apostrophes, hyphens) and the separators between them.
  const re = /(\p{L}[\p{L}\p{M}'’-]*)|([^\p{L}]+)/gu;
  for (const m of text.matchAll(re)) {
    if (m[2] !== undefined) {
      // Only a single space keeps a multiword name together.
      if (m[2] !== ' ') flush();
      continue;
    }
    const word = (m[1] ?? '').replace(/['’]s$/u, '').replace(/[-'’]+$/u, '');
    const first = word.charAt(0);
    const capitalized = first !== '' && first === first.toUpperCase() && first !== first.toLowerCase();
    if (capitalized && !NOT_PLACES.has(word.toLowerCase().replace(/’/g, "'"))) run.push(word);
    else flush();
  }
  flush();
  return places;
}

/** The name of a tool's only required argument, when it is a string; else undefined. */
export function singleStringArgument(tool: ToolSpec): string | undefined {
  const schema = tool.parameters;
  const required = schema['required'];
  const properties = schema['properties'];
  if (!Array.isArray(required) || required.length !== 1) return undefined;
  const name = required[0];
  if (typeof name !== 'string' || typeof properties !== 'object' || properties === null) return undefined;
  const prop = (properties as Record<string, unknown>)[name];
  if (typeof prop !== 'object' || prop === null) return undefined;
  const type = (prop as Record<string, unknown>)['type'];
  return type === 'string' || (Array.isArray(type) && type.includes('string')) ? name : undefined;
}

function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

function requestChars(request: ModelRequest): number {
  let n = request.system.length;
  for (const m of request.messages) {
    n += m.content.length;
    if (m.role === 'assistant') for (const c of m.toolCalls ?? []) n += c.name.length + c.arguments.length;
  }
  for (const t of request.tools) n += t.name.length + t.description.length + JSON.stringify(t.parameters).length;
  if (request.outputSchema) n += JSON.stringify(request.outputSchema).length;
  return n;
}

function respond(request: ModelRequest, content: string, toolCalls: ToolCall[] = []): ModelResponse {
  const produced = content.length + toolCalls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
  return {
    message: { role: 'assistant', content, ...(toolCalls.length > 0 && { toolCalls }) },
    usage: { inputTokens: estimateTokens(requestChars(request)), outputTokens: Math.max(1, estimateTokens(produced)) },
    stopReason: toolCalls.length > 0 ? 'tool_calls' : 'end',
  };
}

/** "get_local_time" -> "local time". */
function humanize(toolName: string): string {
  return toolName.replace(/^get[_-]?/i, '').replace(/[_-]+/g, ' ').trim() || toolName;
}

function renderValue(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** A tool result as short readable text: JSON objects become "key: value" pairs. */
function renderResult(content: string, place: string | undefined): string {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return content.trim();
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const parts = Object.entries(value)
      .filter(([, v]) => !(place !== undefined && typeof v === 'string' && v.toLowerCase() === place.toLowerCase()))
      .map(([k, v]) => `${k}: ${renderValue(v)}`);
    return parts.join(', ') || '{}';
  }
  return renderValue(value);
}

interface Finding {
  tool: string;
  text: string;
  isError: boolean;
}

/** The tool results grouped by place (the call's only string argument), in the order of the calls; the rest apart. */
function findingsByPlace(messages: Message[], results: ToolResultMessage[]): { byPlace: Map<string, Finding[]>; other: Finding[] } {
  const calls = new Map<string, ToolCall>();
  for (const m of messages) if (m.role === 'assistant') for (const c of m.toolCalls ?? []) calls.set(c.id, c);
  const byPlace = new Map<string, Finding[]>();
  const other: Finding[] = [];
  for (const r of results) {
    const call = calls.get(r.toolCallId);
    let place: string | undefined;
    if (call) {
      try {
        const args: unknown = JSON.parse(call.arguments);
        if (typeof args === 'object' && args !== null) {
          const values = Object.values(args).filter((v): v is string => typeof v === 'string');
          if (values.length === 1) place = values[0];
        }
      } catch {
        // arguments that are not JSON: no place
      }
    }
    const finding = {
      tool: humanize(r.toolName),
      text: r.isError ? `unavailable (${r.content.trim()})` : renderResult(r.content, place),
      isError: r.isError === true,
    };
    if (place === undefined) other.push(finding);
    else {
      const list = byPlace.get(place) ?? [];
      list.push(finding);
      byPlace.set(place, list);
    }
  }
  return { byPlace, other };
}

/** One line per place (in the order of the calls), gathering the tool results for it. */
function composeAnswer(messages: Message[], results: ToolResultMessage[]): { text: string; places: string[] } {
  const { byPlace, other } = findingsByPlace(messages, results);
  const line = (findings: Finding[]) => findings.map((f) => `${f.tool}: ${f.text}`).join('; ');
  const lines = [...byPlace.entries()].map(([place, findings]) => `${place} — ${line(findings)}`);
  if (other.length > 0) lines.push(line(other));
  return { text: `Here is what I found:\n${lines.map((l) => `- ${l}`).join('\n')}`, places: [...byPlace.keys()] };
}

/** What the demo's approval call says: the good news of each place, in a line. */
function postcardText(messages: Message[], results: ToolResultMessage[]): string {
  const { byPlace } = findingsByPlace(messages, results);
  const parts = [...byPlace.entries()].map(([place, findings]) => {
    const good = findings.filter((f) => !f.isError).map((f) => f.text);
    return good.length > 0 ? `${place}: ${good.join(', ')}` : `no news from ${place}`;
  });
  const text = `Greetings from your travel helper!${parts.length > 0 ? ` ${parts.join('; ')}.` : ''}`;
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/** The call ID of the demo model's one call that needs approval (`keel approve <run> demo_postcard`). */
export const DEMO_APPROVAL_CALL_ID = 'demo_postcard';

function needsApproval(tool: ToolSpec): boolean {
  return tool.requiresApproval === true;
}

function defaultFor(schema: unknown, text: string, places: string[]): unknown {
  const s = (typeof schema === 'object' && schema !== null ? schema : {}) as Record<string, unknown>;
  if (Array.isArray(s['enum']) && s['enum'].length > 0) return s['enum'][0];
  if ('const' in s) return s['const'];
  const type = Array.isArray(s['type']) ? s['type'][0] : s['type'];
  switch (type) {
    case 'string':
      return text;
    case 'number':
    case 'integer':
      return 0;
    case 'boolean':
      return false;
    case 'array': {
      const items = s['items'] as Record<string, unknown> | undefined;
      return items && items['type'] === 'string' ? [...places] : [];
    }
    case 'object':
      return {};
    default:
      return text;
  }
}

/** Best effort at JSON for an output schema: `summary` when it has one, else `{ answer }`. */
export function structuredAnswer(schema: JsonSchema, text: string, places: string[] = []): string {
  const properties = schema['properties'];
  const required = Array.isArray(schema['required']) ? (schema['required'] as unknown[]) : [];
  if (typeof properties !== 'object' || properties === null) return JSON.stringify({ answer: text });
  const props = properties as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  if ('summary' in props) out['summary'] = text;
  for (const name of required) {
    if (typeof name === 'string' && !(name in out)) out[name] = defaultFor(props[name], text, places);
  }
  if (Object.keys(out).length === 0) out['answer'] = text;
  return JSON.stringify(out);
}

function finalAnswer(request: ModelRequest, text: string, places: string[] = []): ModelResponse {
  return respond(request, request.outputSchema ? structuredAnswer(request.outputSchema, text, places) : text);
}

const SCHEDULE = 'schedule_next_turn';
const DONE = 'report_done';
/** A demo monitor looks this many times, this far apart. */
const MONITOR_LOOKS = 3;
const MONITOR_DELAY_SECONDS = 10;

/** The monitor's next step after a look: sleep and look again, or report done. */
function monitorStep(request: ModelRequest, text: string): ModelResponse {
  const looks = request.messages.filter((m) => m.role === 'user').length;
  const goal = request.messages.find((m) => m.role === 'user')?.content ?? '';
  if (looks >= MONITOR_LOOKS) {
    return respond(request, text, [{ id: 'demo_done', name: DONE, arguments: JSON.stringify({ detail: text }) }]);
  }
  const args = { delay_seconds: MONITOR_DELAY_SECONDS, next_prompt: goal, reason: `look again (${looks + 1} of ${MONITOR_LOOKS})` };
  return respond(request, text, [{ id: `demo_schedule_${looks}`, name: SCHEDULE, arguments: JSON.stringify(args) }]);
}

export function createDemoProvider(): ModelProvider {
  return {
    name: 'demo',
    async generate(request) {
      const response = await answer(request);
      // A streaming run sees the answer word by word, as from a real model.
      if (request.onDelta) {
        for (const piece of response.message.content.match(/\S+\s*|\s+/gu) ?? []) request.onDelta({ kind: 'text', text: piece });
        for (const [index, call] of (response.message.toolCalls ?? []).entries()) {
          request.onDelta({ kind: 'tool_call', index, id: call.id, name: call.name, arguments: call.arguments });
        }
      }
      return response;
    },
  };
}

async function answer(request: ModelRequest): Promise<ModelResponse> {
  request.signal?.throwIfAborted();
  const { messages } = request;
  const last = messages.at(-1);
  const monitor = request.tools.some((t) => t.name === SCHEDULE) && request.tools.some((t) => t.name === DONE);

  if (last?.role === 'tool') {
    let i = messages.length;
    while (i > 0 && messages[i - 1]?.role === 'tool') i--;
    const results = messages.slice(i) as ToolResultMessage[];
    if (monitor && results.some((r) => r.toolName === SCHEDULE || r.toolName === DONE)) {
      return respond(request, results.some((r) => r.toolName === DONE) ? 'Done.' : 'Until the next look.');
    }
    if (monitor) return monitorStep(request, composeAnswer(messages, results).text);

    // Everything found since the question: the lookups, then the call that needed approval.
    const since = messages.findLastIndex((m) => m.role === 'user') + 1;
    const turn = messages.slice(since);
    const gated = new Set(request.tools.filter(needsApproval).map((t) => t.name));
    const all = turn.filter((m): m is ToolResultMessage => m.role === 'tool');
    const lookups = all.filter((r) => !gated.has(r.toolName));
    const asked = turn.some((m) => m.role === 'assistant' && (m.toolCalls ?? []).some((c) => gated.has(c.name)));
    const postcard = request.tools.filter(needsApproval).find((t) => singleStringArgument(t) !== undefined);
    if (postcard && !asked && lookups.length > 0) {
      const arg = singleStringArgument(postcard)!;
      const call = { id: DEMO_APPROVAL_CALL_ID, name: postcard.name, arguments: JSON.stringify({ [arg]: postcardText(messages, lookups) }) };
      return respond(request, `One more step, which needs your approval: ${postcard.name}.`, [call]);
    }
    const { text, places } = composeAnswer(messages, lookups);
    const approved = all
      .filter((r) => gated.has(r.toolName))
      .map((r) => `- ${humanize(r.toolName)}: ${r.isError ? `not done (${r.content.trim()})` : r.content.trim()}`);
    return finalAnswer(request, [text, ...approved].join('\n'), places);
  }

  if (last?.role === 'user') {
    const tools = request.tools
      .filter((tool) => !monitor || (tool.name !== SCHEDULE && tool.name !== DONE))
      .filter((tool) => !needsApproval(tool))
      .map((tool) => ({ tool, arg: singleStringArgument(tool) }))
      .filter((t): t is { tool: ToolSpec; arg: string } => t.arg !== undefined);
    if (tools.length > 0) {
      const places = findPlaces(last.content);
      if (places.length === 0) {
        return finalAnswer(
          request,
          'Which city would you like to know about? Please name a city, for example Paris or Tokyo.',
        );
      }
      const calls: ToolCall[] = [];
      for (const place of places) {
        for (const { tool, arg } of tools) {
          calls.push({ id: `demo_call_${calls.length + 1}`, name: tool.name, arguments: JSON.stringify({ [arg]: place }) });
        }
      }
      return respond(request, '', calls);
    }
    const question = last.content.trim().replace(/\s+/g, ' ');
    const short = question.length > 200 ? `${question.slice(0, 200)}…` : question;
    return finalAnswer(request, `You asked: "${short}". I am the offline demo model, so this is all I can say.`);
  }

  return finalAnswer(request, 'I am the offline demo model. Ask me about a city, for example "What is the weather in Paris?".');
}
