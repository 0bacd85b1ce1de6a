/**
 * The permission policy: which tool calls may run, must be approved, or are refused, from
 * rules in Claude Code's syntax (`Bash(npm run test:*)`, `Read(./src/**)`,
 * `WebFetch(domain:example.com)`, `mcp__github`) and a permission mode. Pure and deterministic:
 * it runs inside workflow code, so paths are normalized and globs matched here, by hand.
 *
 * The order of one decision follows Claude Code's (Agent SDK docs, "How permissions are
 * evaluated": deny rules, ask rules, the mode, allow rules), with plan mode's refusal placed
 * right after the deny rules:
 *   1. a deny rule matches: deny, in every mode, bypassPermissions included;
 *   2. plan mode and the tool is not read-only: deny;
 *   3. an ask rule matches: ask, in every mode (Claude Code asks even in bypassPermissions);
 *   4. the mode: bypassPermissions allows; acceptEdits allows file edits inside the cwd;
 *   5. an allow rule (or a remembered one) matches: allow;
 *   6. otherwise no opinion. In dontAsk mode a final ask, from a rule or an earlier stage,
 *      becomes a deny, since nobody will be asked.
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
const READ_TOOLS = new Set(['Read', 'Glob', 'Grep']);
const EDIT_TOOLS = new Set(['Edit', 'Write', 'MultiEdit', 'NotebookEdit']);
const PATH_TOOLS = new Set([...READ_TOOLS, ...EDIT_TOOLS]);

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

/** Validate settings (types, rule syntax, mode, absolute cwd and home); the error names `where`. Returns them normalized. */
export function checkPermissionSettings(settings: unknown, where: string): PermissionSettings {
  const bad = (why: string): never => {
    throw new Error(`${where}: ${why}`);
  };
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    bad(`expected an object such as { mode: 'default', allow: ['Bash(npm test)'], deny: ['Read(./.env)'] }, got ${describe(settings)}.`);
  }
  const input = settings as Record<string, unknown>;
  const keys = ['mode', 'allow', 'ask', 'deny', 'cwd', 'home'];
  for (const key of Object.keys(input)) {
    if (!keys.includes(key)) bad(`unknown key "${key}"; the keys are ${keys.join(', ')}.`);
  }
  const out: PermissionSettings = {};
  if (input.mode !== undefined) {
    if (!PERMISSION_MODES.includes(input.mode as PermissionMode)) {
      bad(`mode must be one of ${PERMISSION_MODES.join(', ')}, got ${describe(input.mode)}.`);
    }
    out.mode = input.mode as PermissionMode;
  }
  for (const list of ['allow', 'ask', 'deny'] as const) {
    const rules = input[list];
    if (rules === undefined) continue;
    if (!Array.isArray(rules)) bad(`${list} must be an array of rule strings, got ${describe(rules)}.`);
    out[list] = (rules as unknown[]).map((rule, i) => {
      if (typeof rule !== 'string') bad(`${list}[${i}] must be a rule string, got ${describe(rule)}.`);
      try {
        return parseRule(rule as string).text;
      } catch (err) {
        return bad(`${list}[${i}]: ${(err as Error).message}`);
      }
    });
  }
  for (const dir of ['cwd', 'home'] as const) {
    const path = input[dir];
    if (path === undefined) continue;
    if (typeof path !== 'string' || !path.startsWith('/')) {
      bad(`${dir} must be an absolute POSIX path such as "/home/me/project", got ${describe(path)}.`);
    }
    out[dir] = normalizePath(path as string);
  }
  return out;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

/**
 * The policy's answer for one call.
 * - mode: the run's current mode (overrides settings.mode; a run can change it by signal)
 * - remembered: extra allow rules the run added from approvals ("allow again")
 * - soFar: the most restrictive decision earlier pipeline stages gave (hooks, middleware); only
 *   dontAsk looks at it (an earlier ask becomes a deny). Otherwise the caller combines.
 */
export function checkPermission(
  settings: PermissionSettings,
  request: PermissionRequest,
  options: { mode?: PermissionMode; remembered?: readonly string[]; soFar?: PermissionDecision } = {},
): PermissionVerdict {
  const mode = options.mode ?? settings.mode ?? 'default';
  const verdict = decide(settings, request, mode, options.remembered ?? []);
  if (mode !== 'dontAsk') return verdict;
  if (verdict.decision === 'ask') {
    return { ...verdict, decision: 'deny', reason: `mode dontAsk: ${verdict.reason} would ask; dontAsk turned the ask into a deny` };
  }
  if (options.soFar === 'ask' && verdict.decision !== 'deny') {
    return { decision: 'deny', reason: 'mode dontAsk: an earlier stage asked for approval; dontAsk turned the ask into a deny' };
  }
  return verdict;
}

function decide(
  settings: PermissionSettings,
  request: PermissionRequest,
  mode: PermissionMode,
  remembered: readonly string[],
): PermissionVerdict {
  const target = targetOf(settings, request);
  const denied = firstMatch(settings.deny, request, target, settings);
  if (denied) return { decision: 'deny', reason: `deny rule "${denied}"`, rule: denied };
  if (mode === 'plan' && !request.readOnly) {
    // Claude Code's SDK hands such calls to the approval callback; its CLI docs say plan mode
    // does not modify files or run commands. A plan that asked would offer what it must refuse.
    return { decision: 'deny', reason: `mode plan: only read-only tools may run, and "${request.tool}" is not read-only` };
  }
  const asked = firstMatch(settings.ask, request, target, settings);
  if (asked) return { decision: 'ask', reason: `ask rule "${asked}"`, rule: asked };
  if (mode === 'bypassPermissions') return { decision: 'allow', reason: 'mode bypassPermissions: every call no deny or ask rule matches is allowed' };
  if (mode === 'acceptEdits' && editsInsideCwd(settings, request, target)) {
    return { decision: 'allow', reason: `mode acceptEdits: file edits${EDIT_TOOLS.has(request.tool) ? ' inside the working directory' : ''} are allowed` };
  }
  const rules = [...(settings.allow ?? []).map((text) => ({ text, remembered: false })), ...remembered.map((text) => ({ text, remembered: true }))];
  const used = allowedBy(rules, request, target, settings);
  if (used) {
    const names = used.map((r) => `${r.remembered ? 'remembered ' : ''}allow rule "${r.text}"`);
    return { decision: 'allow', reason: names.join(' and '), rule: used[0]!.text };
  }
  return { decision: undefined };
}

// Claude Code auto-accepts edits in the working directories only (its permission-modes docs).
// Its acceptEdits also runs some filesystem commands (mkdir, touch, mv, cp) when their paths stay
// inside the working directory; telling that needs a real shell parser, so Bash is left to rules.
function editsInsideCwd(settings: PermissionSettings, request: PermissionRequest, target: Target): boolean {
  if (EDIT_TOOLS.has(request.tool)) return target.kind === 'path' && within(target.path, settings.cwd ?? '/');
  return request.editsFiles === true;
}

function within(path: string, dir: string): boolean {
  return dir === '/' || path === dir || path.startsWith(`${dir}/`);
}

/**
 * The rule an approval with `remember: true` adds, allowing this call's exact target again:
 * - Bash: the exact command, `Bash(npm run test)` (a compound command as a whole);
 * - file tools: the tool and the normalized path, rooted as the call's was: `Read(//etc/hosts)`,
 *   `Edit(./src/a.ts)`, `Read(~/.zshrc)`, so it resolves as the call did;
 * - WebFetch: the URL's host, `WebFetch(domain:example.com)`;
 * - custom tools with a key: `tool(key)`;
 * - anything else: the bare tool name.
 * `*` and `\` in the target are escaped (`\*`, `\\`) so they match only themselves. A call
 * without a target (no command, path or URL) gives `Tool()`, which matches only such calls.
 */
export function rememberRule(request: PermissionRequest): string {
  const tool = request.tool;
  if (PATH_TOOLS.has(tool)) {
    // Written relative to where it points (`./`, `~/` or `//`), so it resolves as the call did.
    const raw = pathArgument(request);
    if (raw === undefined) return `${tool}()`;
    if (raw === '~' || raw.startsWith('~/')) return `${tool}(~/${escapePattern(relativePath(raw.slice(1)))})`;
    if (raw.startsWith('/')) return `${tool}(/${escapePattern(normalizePath(raw))})`;
    return `${tool}(./${escapePattern(relativePath(raw))})`;
  }
  const target = targetOf({}, request);
  switch (target.kind) {
    case 'command':
      return `Bash(${escapePattern(target.command.trim())})`;
    case 'url':
      return target.host === undefined ? `${tool}()` : `WebFetch(domain:${target.host})`;
    case 'key':
      return `${tool}(${escapePattern(target.key)})`;
    default:
      return tool === 'Bash' || tool === 'WebFetch' ? `${tool}()` : tool;
  }
}

// ---- what a call is about ----

type Target =
  | { kind: 'command'; command: string }
  | { kind: 'path'; path: string }
  /** A path that cannot be resolved (`~/` without a home): no rule about paths applies to it. */
  | { kind: 'unresolved' }
  | { kind: 'url'; host: string | undefined }
  | { kind: 'key'; key: string }
  | { kind: 'none' };

function targetOf(settings: PermissionSettings, request: PermissionRequest): Target {
  const args = request.arguments ?? {};
  const cwd = settings.cwd ?? '/';
  if (request.tool === 'Bash') {
    const command = args.command;
    return typeof command === 'string' && command.trim() !== '' ? { kind: 'command', command } : { kind: 'none' };
  }
  if (PATH_TOOLS.has(request.tool)) {
    const raw = pathArgument(request);
    if (raw === undefined) return { kind: 'none' };
    const path = resolvePath(raw, cwd, settings.home);
    return path === undefined ? { kind: 'unresolved' } : { kind: 'path', path };
  }
  if (request.tool === 'WebFetch') {
    const url = args.url;
    if (typeof url !== 'string' || url.trim() === '') return { kind: 'none' };
    return { kind: 'url', host: hostOf(url) };
  }
  return request.key === undefined ? { kind: 'none' } : { kind: 'key', key: request.key };
}

function pathArgument(request: PermissionRequest): string | undefined {
  const args = request.arguments ?? {};
  const raw = [args.file_path, args.notebook_path, args.path].find((p) => p !== undefined && p !== null);
  // Glob and Grep search the working directory when given no path.
  if ((raw === undefined || raw === '') && (request.tool === 'Glob' || request.tool === 'Grep')) return '.';
  return typeof raw === 'string' && raw !== '' ? raw : undefined;
}

// The WHATWG parser, as fetch uses: a hand-made one would disagree about `https://a.com\@b.com`.
function hostOf(url: string): string | undefined {
  try {
    const host = new URL(url).hostname.toLowerCase().replace(/\.$/, '');
    return host === '' ? undefined : host;
  } catch {
    return undefined;
  }
}

// ---- matching ----

function firstMatch(
  texts: readonly string[] | undefined,
  request: PermissionRequest,
  target: Target,
  settings: PermissionSettings,
): string | undefined {
  return (texts ?? []).find((text) => {
    const rule = parseRule(text);
    if (!appliesTo(rule, request)) return false;
    if (rule.kind !== 'command' || rule.pattern === '' || target.kind !== 'command') return matchesTarget(rule, target, settings);
    // A deny or ask rule hits when the whole command or any part of it matches.
    return [target.command.trim(), ...splitCommand(target.command)].some((part) => commandMatches(rule.pattern, part, true));
  });
}

/** The allow rules that together allow the call: for a compound command, one for each part. */
function allowedBy<R extends { text: string }>(
  rules: readonly R[],
  request: PermissionRequest,
  target: Target,
  settings: PermissionSettings,
): R[] | undefined {
  const parsed = rules.map((r) => ({ r, rule: parseRule(r.text) })).filter(({ rule }) => appliesTo(rule, request));
  // For Bash, matchesTarget knows only exact rules and `Bash()`: a wildcard must not see the whole line.
  const whole = parsed.find(({ rule }) => matchesTarget(rule, target, settings));
  if (whole) return [whole.r];
  if (target.kind !== 'command') return undefined;
  const used: R[] = [];
  for (const part of splitCommand(target.command)) {
    const hit = parsed.find(({ rule }) => rule.kind === 'command' && commandMatches(rule.pattern, part, !hasSubstitution(part)));
    if (!hit) return undefined;
    if (!used.includes(hit.r)) used.push(hit.r);
  }
  return used.length > 0 ? used : undefined;
}

function appliesTo(rule: PermissionRule, request: PermissionRequest): boolean {
  if (rule.kind === 'server') return request.tool.startsWith(`mcp__${rule.server}__`);
  if (rule.tool === request.tool) return true;
  return (rule.tool === 'Read' && READ_TOOLS.has(request.tool)) || (rule.tool === 'Edit' && EDIT_TOOLS.has(request.tool));
}

/** Whether the rule matches the call's target as a whole (a Bash command only by an exact rule). */
function matchesTarget(rule: PermissionRule, target: Target, settings: PermissionSettings): boolean {
  switch (rule.kind) {
    case 'tool':
    case 'server':
      return true;
    case 'command':
      if (rule.pattern === '') return target.kind === 'none';
      // A rule without wildcards may name a whole compound command: that is what rememberRule writes.
      return target.kind === 'command' && commandMatches(rule.pattern, target.command.trim(), false);
    case 'key':
      if (rule.pattern === '') return target.kind === 'key' && target.key === '';
      return target.kind === 'key' && commandMatches(rule.pattern, target.key, true);
    case 'domain':
      if (rule.domain === '') return target.kind === 'none';
      if (target.kind !== 'url' || target.host === undefined) return false;
      return rule.domain.startsWith('*.') ? target.host.endsWith(rule.domain.slice(1)) : target.host === rule.domain;
    case 'path':
      if (rule.pattern === '') return target.kind === 'none';
      return target.kind === 'path' && pathMatches(rule.pattern, target.path, settings);
  }
}

// ---- commands ----

/**
 * The simple commands of a command line: split on `&&`, `||`, `;`, `|`, `&` and newlines
 * outside quotes, so `echo "a && b"` stays one part. Redirections such as `2>&1` and `&>` are
 * not separators. This is no shell parser: deny rules on Bash are a guard, not a sandbox.
 */
export function splitCommand(command: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quote: string | undefined;
  const cut = () => {
    if (current.trim() !== '') parts.push(current.trim());
    current = '';
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    const next = command[i + 1];
    if (quote) {
      current += c;
      if (c === '\\' && quote === '"' && next !== undefined) current += command[++i];
      else if (c === quote) quote = undefined;
    } else if (c === '\\' && next !== undefined) {
      current += c + command[++i];
    } else if (c === "'" || c === '"') {
      quote = c;
      current += c;
    } else if (c === ';' || c === '\n') {
      cut();
    } else if (c === '|') {
      cut();
      if (next === '|' || next === '&') i++;
    } else if (c === '&') {
      const prev = current[current.length - 1];
      if (next === '&') {
        cut();
        i++;
      } else if (prev === '>' || prev === '<' || next === '>') {
        current += c;
      } else {
        cut();
      }
    } else {
      current += c;
    }
  }
  cut();
  return parts;
}

// Command and process substitutions run commands no rule looked at: wildcards do not allow them.
function hasSubstitution(part: string): boolean {
  return /\$\(|`|<\(|>\(/.test(part);
}

type Token = string | typeof STAR;
const STAR = Symbol('*');

/** `\*` is a literal star and `\\` a backslash; any other character is itself. */
function tokenize(pattern: string): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    const next = pattern[i + 1];
    if (c === '\\' && (next === '*' || next === '\\')) {
      tokens.push(next);
      i++;
    } else {
      tokens.push(c === '*' ? STAR : c);
    }
  }
  return tokens;
}

function escapePattern(text: string): string {
  return text.replace(/[\\*]/g, (c) => `\\${c}`);
}

function literal(tokens: readonly Token[]): string {
  return tokens.map((t) => (t === STAR ? '*' : t)).join('');
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A Bash command (or a custom tool's key) against a pattern:
 * - `npm run test:*` (legacy prefix): the text is `npm run test`, or it followed by whitespace;
 * - `git *`: a `*` matches any characters, spaces included. As in Claude Code, a single
 *   trailing ` *` also matches nothing at all, so `git *` allows `git` but not `gitk`;
 * - `ls`: exactly that.
 * With `wildcards` false only exact patterns can match.
 */
function commandMatches(pattern: string, text: string, wildcards: boolean): boolean {
  const tokens = tokenize(pattern);
  const stars = tokens.filter((t) => t === STAR).length;
  if (stars === 0) return literal(tokens) === text;
  if (!wildcards) return false;
  const last = tokens.length - 1;
  if (stars === 1 && tokens[last] === STAR && tokens[last - 1] === ':') {
    const prefix = literal(tokens.slice(0, -2));
    return text === prefix || (text.startsWith(prefix) && /\s/.test(text[prefix.length] ?? ''));
  }
  if (stars === 1 && tokens[last] === STAR && tokens[last - 1] === ' ') {
    const prefix = literal(tokens.slice(0, -2));
    return text === prefix || text.startsWith(`${prefix} `);
  }
  const source = tokens.map((t) => (t === STAR ? '[\\s\\S]*' : escapeRegExp(t))).join('');
  return new RegExp(`^${source}$`).test(text);
}

// ---- paths ----

/** Resolve `.` and `..` (never above the root) and collapse `//` in an absolute POSIX path. */
export function normalizePath(path: string): string {
  const out: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return `/${out.join('/')}`;
}

/** Like normalizePath for a relative path; the `..` that climb above its start stay. */
function relativePath(path: string): string {
  const out: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..' && out.length > 0 && out[out.length - 1] !== '..') out.pop();
    else out.push(segment);
  }
  return out.join('/');
}

function resolvePath(path: string, cwd: string, home: string | undefined): string | undefined {
  if (path === '~' || path.startsWith('~/')) return home === undefined ? undefined : normalizePath(`${home}/${path.slice(1)}`);
  return normalizePath(path.startsWith('/') ? path : `${cwd}/${path}`);
}

/**
 * Where a path pattern is rooted, as Claude Code defines it: `//x` at the filesystem root,
 * `~/x` at home, `/x` at the project root (keel has no separate project root: it is
 * `settings.cwd`), `./x` and `x` at the working directory. As in gitignore, a pattern without
 * a `/` (`*.env`, `.env`) matches at any depth below the working directory.
 */
function anchor(pattern: string, settings: PermissionSettings): string | undefined {
  const cwd = settings.cwd ?? '/';
  if (pattern.startsWith('//')) return pattern.slice(1);
  if (pattern === '~' || pattern.startsWith('~/')) return settings.home === undefined ? undefined : `${settings.home}/${pattern.slice(2)}`;
  if (pattern.startsWith('/')) return `${cwd}${pattern}`;
  if (pattern.startsWith('./')) return `${cwd}/${pattern.slice(2)}`;
  return pattern.replace(/\/$/, '').includes('/') ? `${cwd}/${pattern}` : `${cwd}/**/${pattern}`;
}

/**
 * gitignore-like: `*` matches within one segment, `**` any number of segments (`dir/**` also
 * matches `dir`), and a pattern that matches a directory matches everything inside it. The
 * path is already normalized, so `./src/../../etc/passwd` is judged where it really points.
 */
function pathMatches(pattern: string, path: string, settings: PermissionSettings): boolean {
  const anchored = anchor(pattern, settings);
  if (anchored === undefined) return false;
  const pat = normalizePath(anchored).split('/').filter(Boolean);
  const segments = path.split('/').filter(Boolean);
  for (let n = segments.length; n >= 0; n--) {
    if (matchSegments(pat, 0, segments.slice(0, n), 0)) return true;
  }
  return false;
}

function matchSegments(pat: readonly string[], i: number, path: readonly string[], j: number): boolean {
  if (i === pat.length) return j === path.length;
  if (pat[i] === '**') {
    for (let k = j; k <= path.length; k++) if (matchSegments(pat, i + 1, path, k)) return true;
    return false;
  }
  if (j === path.length) return false;
  return segmentMatches(pat[i]!, path[j]!) && matchSegments(pat, i + 1, path, j + 1);
}

function segmentMatches(pattern: string, name: string): boolean {
  const source = tokenize(pattern)
    .map((t) => (t === STAR ? '[^/]*' : escapeRegExp(t)))
    .join('');
  return new RegExp(`^${source}$`).test(name);
}
