/**
 * `npm run contract`: writes the contract other clients rely on, from the zod schemas of
 * src/core/contract.ts and src/core/schemas.ts: one JSON Schema document per workflow type
 * (contract/<workflowType>.schema.json) and the reference page docs/contract.md.
 * `npm run contract -- --check` writes nothing and fails when the files differ (CI, and
 * test/contract.test.ts, run the same comparison).
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import {
  CONTRACTS,
  KEEL_STATUSES,
  RUN_EVENT_TYPES,
  SEARCH_ATTRIBUTES,
  agentRunResultSchema,
  approvalReceiptSchema,
  eventPageSchema,
  keelStatusSchema,
  messageSchema,
  monitorPhaseSchema,
  monitorResultSchema,
  monitorStateSchema,
  monitorStopReasonSchema,
  pendingApprovalSchema,
  runEventSchema,
  runStateSchema,
  runStatusSchema,
  toolCallSchema,
  transcriptPageSchema,
  transcriptRangeSchema,
  tripwireSchema,
  usageSchema,
  type Operation,
  type WorkflowContract,
} from '../src/core/contract.js';
import { ErrorTypes } from '../src/core/errors.js';
import {
  agentRunInputSchema,
  approvalDecisionSchema,
  backgroundReportSchema,
  injectInputSchema,
  jsonValueSchema,
  monitorBudgetsSchema,
  monitorInputSchema,
  monitorOptionsSchema,
  permissionModeSchema,
  runOptionsSchema,
  runOverridesSchema,
} from '../src/core/schemas.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CONTRACT_DIR = 'contract';
export const REFERENCE_PAGE = 'docs/contract.md';

/** The schemas a document names in its `$defs`, by name; every other schema is written inline. */
const NAMED: [string, z.ZodType][] = [
  ['AgentRunInput', agentRunInputSchema],
  ['AgentRunResult', agentRunResultSchema],
  ['MonitorInput', monitorInputSchema],
  ['MonitorResult', monitorResultSchema],
  ['RunOverrides', runOverridesSchema],
  ['RunOptions', runOptionsSchema],
  ['MonitorBudgets', monitorBudgetsSchema],
  ['MonitorOptions', monitorOptionsSchema],
  ['RunState', runStateSchema],
  ['MonitorState', monitorStateSchema],
  ['TranscriptRange', transcriptRangeSchema],
  ['TranscriptPage', transcriptPageSchema],
  ['EventPage', eventPageSchema],
  ['RunEvent', runEventSchema],
  ['Message', messageSchema],
  ['ToolCall', toolCallSchema],
  ['Usage', usageSchema],
  ['PendingApproval', pendingApprovalSchema],
  ['ApprovalDecision', approvalDecisionSchema],
  ['ApprovalReceipt', approvalReceiptSchema],
  ['InjectInput', injectInputSchema],
  ['BackgroundReport', backgroundReportSchema],
  ['PermissionMode', permissionModeSchema],
  ['RunStatus', runStatusSchema],
  ['MonitorPhase', monitorPhaseSchema],
  ['MonitorStopReason', monitorStopReasonSchema],
  ['KeelStatus', keelStatusSchema],
  ['Tripwire', tripwireSchema],
  ['JsonValue', jsonValueSchema],
];

type Json = Record<string, unknown>;

/** Every named schema as JSON Schema, referring to the others as `#/$defs/<name>`. */
function definitions(): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of NAMED) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
    uri: (id) => `#/$defs/${id}`,
  }) as { schemas: Record<string, Json> };
  const defs: Record<string, Json> = {};
  for (const [id] of NAMED) {
    const { $schema: _s, $id: _i, ...schema } = schemas[id]!;
    defs[id] = tidy(schema);
  }
  return defs;
}

/** Drops the safe-integer bounds zod writes on every integer: they say nothing a reader needs. */
function tidy<T>(value: T): T {
  if (Array.isArray(value)) return value.map(tidy) as T;
  if (typeof value !== 'object' || value === null) return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    if ((k === 'minimum' && v === Number.MIN_SAFE_INTEGER) || (k === 'maximum' && v === Number.MAX_SAFE_INTEGER)) continue;
    out[k] = tidy(v);
  }
  return out as T;
}

/** A schema that is not named: written inline, its references to named ones kept. */
function inline(schema: z.ZodType, byRef: Map<z.ZodType, string>): Json {
  const name = byRef.get(schema);
  if (name) return { $ref: `#/$defs/${name}` };
  const registry = z.registry<{ id: string }>();
  for (const [id, s] of NAMED) registry.add(s, { id });
  registry.add(schema, { id: '__inline' });
  const { schemas } = z.toJSONSchema(registry, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any', uri: (id) => `#/$defs/${id}` }) as {
    schemas: Record<string, Json>;
  };
  const { $schema: _s, $id: _i, ...out } = schemas['__inline']!;
  return tidy(out);
}

function operation(op: Operation, byRef: Map<z.ZodType, string>): Json {
  return {
    description: op.description,
    args: op.args.map((a) => {
      const optional = a.safeParse(undefined).success;
      return { ...inline(a, byRef), ...(optional && { 'x-optional': true }) };
    }),
    ...(op.result && { result: inline(op.result, byRef) }),
    ...(op.internal && { internal: true }),
  };
}

export function contractDocument(c: WorkflowContract, version: string): Json {
  const byRef = new Map(NAMED.map(([id, s]) => [s, id] as const));
  const ops = (group: Record<string, Operation>) => Object.fromEntries(Object.entries(group).map(([name, op]) => [name, operation(op, byRef)]));
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `https://keel.dev/contract/${c.workflowType}.schema.json`,
    title: c.workflowType,
    description:
      `${c.description} The Temporal interface of keel's ${c.workflowType} workflow: each schema below is JSON Schema (draft 2020-12) ` +
      'whose references point into $defs. Generated by `npm run contract` from the zod schemas; do not edit.',
    'x-keel': {
      keelVersion: version,
      workflowType: c.workflowType,
      taskQueue: 'keel',
      input: inline(c.input, byRef),
      result: inline(c.result, byRef),
      failures: Object.values(ErrorTypes),
      statuses: c.statuses.options,
      searchAttributes: SEARCH_ATTRIBUTES,
      eventTypes: RUN_EVENT_TYPES,
      signals: ops(c.signals),
      queries: ops(c.queries),
      updates: ops(c.updates),
    },
    $defs: definitions(),
  };
}

// ---------------------------------------------------------------------------------------------
// The reference page

const ERROR_DOCS = errorDocs();

/** The doc comment of each ErrorTypes entry, read from errors.ts: one text for the code and the page. */
function errorDocs(): Record<string, string> {
  const source = readFileSync(join(ROOT, 'src/core/errors.ts'), 'utf8');
  const block = source.slice(source.indexOf('export const ErrorTypes = {'), source.indexOf('} as const;'));
  const out: Record<string, string> = {};
  for (const m of block.matchAll(/\/\*\*([\s\S]*?)\*\/\s*\n\s*\w+: '(\w+)'/g)) {
    out[m[2]!] = m[1]!
      .split('\n')
      .map((l) => l.replace(/^\s*\*\s?/, '').trim())
      .filter(Boolean)
      .join(' ');
  }
  return out;
}

function typeText(s: Json | undefined, defs: Record<string, Json>): string {
  if (!s) return 'none';
  if (typeof s.$ref === 'string') {
    const name = s.$ref.replace('#/$defs/', '');
    return `[${name}](#${name.toLowerCase()})`;
  }
  if (Array.isArray(s.anyOf)) return (s.anyOf as Json[]).map((x) => typeText(x, defs)).join(' \\| ');
  if (Array.isArray(s.oneOf)) return (s.oneOf as Json[]).map((x) => typeText(x, defs)).join(' \\| ');
  if (Array.isArray(s.enum)) return (s.enum as unknown[]).map((v) => `\`${JSON.stringify(v)}\``).join(' \\| ');
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  if (s.type === 'array') return `${typeText(s.items as Json, defs)}[]`;
  if (s.type === 'object' && s.properties) {
    const props = s.properties as Record<string, Json>;
    const required = new Set((s.required as string[] | undefined) ?? []);
    return `{ ${Object.entries(props)
      .map(([k, v]) => `${k}${required.has(k) ? '' : '?'}: ${typeText(v, defs)}`)
      .join(', ')} }`;
  }
  if (s.type === 'object') return 'object';
  if (typeof s.type === 'string') return s.type === 'integer' ? 'integer' : s.type;
  if (Array.isArray(s.type)) return (s.type as string[]).join(' \\| ');
  return 'any JSON';
}

function fieldsTable(s: Json, defs: Record<string, Json>): string[] {
  const props = (s.properties ?? {}) as Record<string, Json>;
  const required = new Set((s.required as string[] | undefined) ?? []);
  const rows = Object.entries(props).map(([k, v]) => {
    const description = (v.description as string | undefined) ?? '';
    const type = k === 'type' && v.const !== undefined ? `\`${JSON.stringify(v.const)}\`` : typeText(v, defs);
    return `| \`${k}\`${required.has(k) ? '' : '?'} | ${type} | ${description.replace(/\|/g, '\\|')} |`;
  });
  return rows.length ? ['| field | type | |', '| --- | --- | --- |', ...rows] : ['(no fields)'];
}

function opsSection(title: string, group: Record<string, Json>, defs: Record<string, Json>, kind: 'signal' | 'query' | 'update'): string[] {
  const answers = kind !== 'signal';
  const out = [`### ${title}`, '', `| name | argument |${answers ? ' answers |' : ''} |`, `| --- | --- |${answers ? ' --- |' : ''} --- |`];
  for (const [name, op] of Object.entries(group)) {
    const args = (op.args as Json[]).map((a) => `${typeText(a, defs)}${a['x-optional'] ? ' (optional)' : ''}`).join(', ') || 'none';
    const answer = answers ? ` ${typeText(op.result as Json, defs)} |` : '';
    out.push(`| \`${name}\`${op.internal ? " (keel's own)" : ''} | ${args} |${answer} ${String(op.description).replace(/\|/g, '\\|')} |`);
  }
  return [...out, ''];
}

export function referencePage(docs: Json[]): string {
  const defs = (docs[0]!.$defs ?? {}) as Record<string, Json>;
  const out: string[] = [
    '# The contract: keel from any Temporal client',
    '',
    '<!-- Generated by `npm run contract` from src/core/contract.ts and src/core/schemas.ts; do not edit. -->',
    '',
    'keel runs are Temporal workflows whose input, result, signals, queries, Updates, statuses and events are plain',
    'JSON, so any Temporal client in any language can start, decide and read them. This page is made from the JSON',
    `Schema files shipped in the package (\`${CONTRACT_DIR}/agentRun.schema.json\`, \`${CONTRACT_DIR}/agentMonitor.schema.json\`,`,
    "reachable as `keel/contract/<name>`): each describes one workflow type under `x-keel` and holds the schemas in `$defs`.",
    'A test fails when these files and the schemas part.',
    '',
  ];
  for (const doc of docs) {
    const k = doc['x-keel'] as Json;
    out.push(
      `## ${k.workflowType}`,
      '',
      String(doc.description).split(' The Temporal interface')[0]!,
      '',
      `Workflow type \`${k.workflowType}\`, task queue \`${k.taskQueue}\` by default.`,
      '',
      `- input: ${typeText(k.input as Json, defs)}`,
      `- result: ${typeText(k.result as Json, defs)}`,
      `- statuses (\`KeelStatus\`): ${(k.statuses as string[]).map((s) => `\`${s}\``).join(', ')}`,
      '',
      ...opsSection('Signals', k.signals as Record<string, Json>, defs, 'signal'),
      ...opsSection('Queries', k.queries as Record<string, Json>, defs, 'query'),
      ...opsSection('Updates', k.updates as Record<string, Json>, defs, 'update'),
    );
  }
  out.push(
    '## Search attributes',
    '',
    `- \`KeelAgent\` (Keyword): ${SEARCH_ATTRIBUTES.KeelAgent.description}`,
    `- \`KeelStatus\` (Keyword): ${KEEL_STATUSES.map((s) => `\`${s}\``).join(', ')}`,
    '',
    '## Failures',
    '',
    "A run that fails, fails its workflow with an `ApplicationFailure` whose `type` is one of these (an activity's failure keeps its type):",
    '',
    '| type | |',
    '| --- | --- |',
    ...Object.values(ErrorTypes).map((t) => `| \`${t}\` | ${ERROR_DOCS[t] ?? ''} |`),
    '',
    '## Events',
    '',
    "The `events` query answers pages of the run's log (`RunEvent`, numbered by `seq`, `at` an ISO time). Every event has",
    '`seq`, `at` and `type`; the other fields by type:',
    '',
  );
  const union = (defs.RunEvent?.oneOf ?? defs.RunEvent?.anyOf ?? []) as Json[];
  for (const variant of union) {
    const props = variant.properties as Record<string, Json>;
    const type = props.type!.const as string;
    const { seq: _q, at: _a, type: _t, ...rest } = props;
    out.push(`### \`${type}\``, '');
    if (variant.description) out.push(String(variant.description), '');
    out.push(...fieldsTable({ ...variant, properties: rest }, defs), '');
  }
  out.push('## Schemas', '');
  for (const name of Object.keys(defs)) {
    if (name === 'RunEvent') continue;
    const s = defs[name]!;
    out.push(`### ${name}`, '');
    if (s.description) out.push(String(s.description), '');
    if (s.type === 'object' && s.properties) out.push(...fieldsTable(s, defs), '');
    else out.push(typeText(s, defs), '');
  }
  return out.join('\n');
}

/** Every generated file, by path from the repository root, with its text. */
export function contractFiles(): Record<string, string> {
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const docs = CONTRACTS.map((c) => contractDocument(c, version));
  const files: Record<string, string> = {};
  for (const doc of docs) files[`${CONTRACT_DIR}/${(doc['x-keel'] as Json).workflowType as string}.schema.json`] = `${JSON.stringify(doc, null, 2)}\n`;
  files[REFERENCE_PAGE] = referencePage(docs);
  return files;
}

function main(): void {
  const check = process.argv.includes('--check');
  const stale: string[] = [];
  for (const [path, text] of Object.entries(contractFiles())) {
    const full = join(ROOT, path);
    let current: string | undefined;
    try {
      current = readFileSync(full, 'utf8');
    } catch {
      current = undefined;
    }
    if (current === text) continue;
    if (check) stale.push(path);
    else {
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, text);
      console.log(`wrote ${path}`);
    }
  }
  if (stale.length > 0) {
    console.error(`The contract files differ from the schemas: ${stale.join(', ')}. Run \`npm run contract\` and commit them.`);
    process.exit(1);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
