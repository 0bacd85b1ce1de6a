/**
 * Permission rules and settings: the types, one rule's syntax (Claude Code's), and the check of
 * a settings object. Pure: it runs inside workflow code.
 */


export type PermissionMode = 'default' | 'acceptEdits' | 'plan' | 'dontAsk' | 'bypassPermissions';
export const PERMISSION_MODES: readonly PermissionMode[] = ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'];
export type PermissionDecision = 'allow' | 'ask' | 'deny';

/** Plain JSON, recorded in an agent's spec. */
export interface PermissionSettings {
  /** Default 'default'. */
  mode?: PermissionMode;
  allow?: string[];
  ask?: string[];
  deny?: string[];
  /** Working directory relative paths resolve against (absolute POSIX path). Default '/'. */
  cwd?: string;
  /** Home directory for `~/` patterns. Optional; without it `~/` rules never match. */
  home?: string;
}

/** What the policy looks at for one call. */
export interface PermissionRequest {
  /** The tool name as the model called it. */
  tool: string;
  /** Parsed JSON arguments (possibly rewritten by earlier stages). */
  arguments: Record<string, unknown>;
  /** The tool is declared read-only. */
  readOnly: boolean;
  /** A custom tool declared as editing files (acceptEdits allows it). */
  editsFiles?: boolean;
  /** For custom tools: the string `Tool(specifier)` rules match against (the tool's permissionKey(args)). */
  key?: string;
}

export interface PermissionVerdict {
  /** undefined: the policy has no opinion (no rule matched, the mode says nothing). */
  decision: PermissionDecision | undefined;
  /** Why, naming the rule or the mode. Always set when decision is set. */
  reason?: string;
  /** The rule text that decided, when a rule did (the first one, when several allowed the parts of a command). */
  rule?: string;
}

/**
 * One parsed rule. `Tool()` (an empty specifier) matches only a call without a target: a Bash
 * call without a command, a file tool without a path, a fetch without a URL, a key of ''.
 */
export type PermissionRule =
  /** Every call of the tool (`Bash`, `Bash(*)`, `my_tool`, `mcp__github__create_issue`). */
  | { text: string; kind: 'tool'; tool: string }
  /** Every tool of an MCP server (`mcp__github`, `mcp__github__*`). */
  | { text: string; kind: 'server'; server: string }
  /** A Bash command pattern, matched against `arguments.command`. */
  | { text: string; kind: 'command'; tool: 'Bash'; pattern: string }
  /** A gitignore-style path pattern for a file tool. */
  | { text: string; kind: 'path'; tool: string; pattern: string }
  /** WebFetch's `domain:` form; `*.example.com` means any subdomain. */
  | { text: string; kind: 'domain'; tool: 'WebFetch'; domain: string }
  /** A pattern matched against a custom tool's `key`, like a Bash command pattern. */
  | { text: string; kind: 'key'; tool: string; pattern: string };

/** deny > ask > allow; undefined is weakest. */
export function mostRestrictive(
  a: PermissionDecision | undefined,
  b: PermissionDecision | undefined,
): PermissionDecision | undefined {
  const rank = (d: PermissionDecision | undefined) => (d === 'deny' ? 3 : d === 'ask' ? 2 : d === 'allow' ? 1 : 0);
  return rank(a) >= rank(b) ? a : b;
}

// Read rules also govern the tools that read files, Edit rules every tool that edits them, as in Claude Code.
export const READ_TOOLS = new Set(['Read', 'Glob', 'Grep']);
export const EDIT_TOOLS = new Set(['Edit', 'Write', 'MultiEdit', 'NotebookEdit']);
export const PATH_TOOLS = new Set([...READ_TOOLS, ...EDIT_TOOLS]);

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MCP_SERVER = /^mcp__([A-Za-z0-9_-]+?)(?:__\*)?$/;

const RULE_FORMS =
  'a rule is a tool name ("Bash", "my_tool", "mcp__server__tool", "mcp__server" or "mcp__server__*") or Tool(specifier), ' +
  'e.g. "Bash(npm run test:*)", "Bash(git *)", "Read(./src/**)", "Edit(//tmp/**)", "WebFetch(domain:example.com)", "my_tool(deploy *)"';

/** Parse and validate one rule; the error names the rule and says what a valid rule looks like. */
export function parseRule(text: string): PermissionRule {
  const bad = (why: string): never => {
    throw new Error(`Invalid permission rule ${JSON.stringify(text)}: ${why}; ${RULE_FORMS}.`);
  };
  if (typeof text !== 'string') bad('expected a string');
  const rule = text.trim();
  if (rule === '') bad('it is empty');
  const open = rule.indexOf('(');
  if (open === -1) {
    if (rule.includes(')')) bad('it has ")" without "("');
    const server = MCP_SERVER.exec(rule);
    // `mcp__server` and `mcp__server__*` name a server; `mcp__server__tool` names one tool.
    if (server && !server[1]!.includes('__')) return { text: rule, kind: 'server', server: server[1]! };
    if (!TOOL_NAME.test(rule)) {
      bad(rule.includes('*') ? 'a "*" in a tool name is only allowed as "mcp__server__*"' : 'a tool name is 1 to 64 letters, digits, "_" or "-"');
    }
    return { text: rule, kind: 'tool', tool: rule };
  }
  const tool = rule.slice(0, open);
  if (!rule.endsWith(')')) bad('the specifier must end with ")"');
  if (!TOOL_NAME.test(tool)) bad(`"${tool}" is not a tool name (1 to 64 letters, digits, "_" or "-")`);
  const spec = rule.slice(open + 1, -1);
  if (spec === '*') return { text: rule, kind: 'tool', tool };
  if (tool === 'Bash') return { text: rule, kind: 'command', tool, pattern: spec };
  if (tool === 'WebFetch') {
    if (spec === '') return { text: rule, kind: 'domain', tool, domain: '' };
    if (!spec.startsWith('domain:')) bad('WebFetch rules take "domain:<host>", e.g. "WebFetch(domain:example.com)" or "WebFetch(domain:*.example.com)"');
    const domain = spec.slice('domain:'.length).toLowerCase();
    if (!/^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(domain)) {
      bad(`"${domain}" is not a host name; write the host alone (no scheme, port or path), e.g. "domain:example.com"`);
    }
    return { text: rule, kind: 'domain', tool, domain };
  }
  if (PATH_TOOLS.has(tool)) {
    if (spec.startsWith('~') && spec !== '~' && !spec.startsWith('~/')) bad('of home paths only "~/..." is supported, not "~user/..."');
    return { text: rule, kind: 'path', tool, pattern: spec };
  }
  return { text: rule, kind: 'key', tool, pattern: spec };
}

// checkPermissionSettings: src/core/schemas.ts (zod; the workflows import this module and load no zod).
