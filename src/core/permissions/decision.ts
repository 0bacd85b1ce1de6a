/**
 * The permission policy: which tool calls may run, must be approved, or are refused, from
 * rules in Claude Code's syntax (`Bash(npm run test:*)`, `Read(./src/**)`,
 * `WebFetch(domain:example.com)`, `mcp__github`) and a permission mode. Pure and deterministic:
 * it runs inside workflow code. The rules and settings are in `rules.ts`, Bash commands in
 * `commands.ts`, paths in `paths.ts`, what a call is about in `targets.ts`.
 *
 * The order of one decision follows Claude Code's (Agent SDK docs, "How permissions are
 * evaluated": deny rules, ask rules, the mode, allow rules), with plan mode's refusal placed
 * right after the deny rules:
 *   1. a deny rule matches: deny, in every mode, bypassPermissions included;
 *   2. plan mode and the tool is not read-only: deny;
 *   3. an ask rule matches: ask, in every mode (Claude Code asks even in bypassPermissions);
 *      and a Bash line the parser cannot see all of, when a deny or ask rule names commands:
 *      ask, since the rule might match what it cannot see;
 *   4. the mode: bypassPermissions allows; acceptEdits allows file edits inside the cwd;
 *   5. an allow rule (or a remembered one) matches: allow. For Bash every command the line
 *      runs must be allowed (`shell.ts` finds them); a line the parser cannot see all of is
 *      allowed by no rule but one naming it exactly (what "allow again" remembers), and asks;
 *   6. otherwise no opinion. In dontAsk mode a final ask, from a rule or an earlier stage,
 *      becomes a deny, since nobody will be asked.
 *
 * A deny or ask rule on Bash matches a line when it matches the whole line or any command the
 * line runs, as written or as the shell reads it (quotes removed, assignments before it dropped,
 * `/bin/rm` also as `rm`): `Bash(rm *)` denies `echo ok && $(rm -rf x)`, `bash -c 'rm x'`,
 * `sudo rm x`, `FOO=1 /bin/rm x`, and not `echo rm`, `git rm x` or `grep "rm -rf" .`.
 */

import { commandMatches, escapePattern, splitCommand } from './commands.js';
import { escapeGlob, normalizePath, pathMatches, relativePath } from './paths.js';
import {
  EDIT_TOOLS,
  parseRule,
  PATH_TOOLS,
  READ_TOOLS,
  type PermissionDecision,
  type PermissionMode,
  type PermissionRequest,
  type PermissionRule,
  type PermissionSettings,
  type PermissionVerdict,
} from './rules.js';
import { pathArgument, targetOf, type Target } from './targets.js';

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
  const unseen = target.kind === 'command' ? target.line.blind[0] : undefined;
  if (unseen !== undefined) {
    const guard = [...(settings.deny ?? []), ...(settings.ask ?? [])].find((text) => {
      const rule = parseRule(text);
      return rule.kind === 'command' && rule.pattern !== '' && appliesTo(rule, request);
    });
    if (guard) {
      const list = settings.deny?.includes(guard) ? 'deny' : 'ask';
      return { decision: 'ask', reason: `${list} rule "${guard}" might match what the policy cannot see: ${unseen}`, rule: guard };
    }
  }
  if (mode === 'bypassPermissions') return { decision: 'allow', reason: 'mode bypassPermissions: every call no deny or ask rule matches is allowed' };
  if (mode === 'acceptEdits' && editsInsideCwd(settings, request, target)) {
    return { decision: 'allow', reason: `mode acceptEdits: file edits${EDIT_TOOLS.has(request.tool) ? ' inside the working directory' : ''} are allowed` };
  }
  const rules = [...(settings.allow ?? []).map((text) => ({ text, remembered: false })), ...remembered.map((text) => ({ text, remembered: true }))];
  const used = allowedBy(rules, request, target, settings);
  if (used && 'unseen' in used) {
    return { decision: 'ask', reason: `allow rule "${used.unseen.text}" does not apply: the policy cannot see all the line runs (${unseen})` };
  }
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
  if (EDIT_TOOLS.has(request.tool)) return target.kind === 'path' && [target.path, ...target.decoded].every((p) => within(p, settings.cwd ?? '/'));
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
    if (raw === '~' || raw.startsWith('~/')) return `${tool}(~/${escapeGlob(relativePath(raw.slice(1)))})`;
    if (raw.startsWith('/')) return `${tool}(/${escapeGlob(normalizePath(raw))})`;
    return `${tool}(./${escapeGlob(relativePath(raw))})`;
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
    return commandForms(target).some((form) => commandMatches(rule.pattern, form, true));
  });
}

/**
 * What a deny or ask rule on Bash is matched against: the whole line, each command the parser
 * finds (as written and as the shell reads it), and the parts the plain splitter finds too, so
 * a line the two read differently is held by either reading.
 */
function commandForms(target: Extract<Target, { kind: 'command' }>): string[] {
  const forms = [target.command.trim(), ...splitCommand(target.command)];
  for (const command of target.line.commands) forms.push(command.text, ...command.forms);
  return forms;
}

/**
 * The allow rules that together allow the call: for a Bash line, one for each command it runs.
 * `unseen`: a Bash line the parser cannot see all of, with an allow rule that would apply to
 * it; only a rule naming the whole line exactly could allow it.
 */
function allowedBy<R extends { text: string }>(
  rules: readonly R[],
  request: PermissionRequest,
  target: Target,
  settings: PermissionSettings,
): R[] | { unseen: R } | undefined {
  const parsed = rules.map((r) => ({ r, rule: parseRule(r.text) })).filter(({ rule }) => appliesTo(rule, request));
  if (target.kind !== 'command') {
    const whole = parsed.find(({ rule }) => matchesTarget(rule, target, settings, true));
    return whole ? [whole.r] : undefined;
  }
  // A rule without wildcards may name a whole compound line: that is what rememberRule writes.
  const line = target.command.trim();
  const exact = parsed.find(({ rule }) => rule.kind === 'command' && rule.pattern !== '' && commandMatches(rule.pattern, line, false));
  if (exact) return [exact.r];
  const applying = parsed.filter(({ rule }) => rule.kind === 'tool' || (rule.kind === 'command' && rule.pattern !== ''));
  if (applying.length === 0) return undefined;
  if (target.line.blind.length > 0) return { unseen: applying[0]!.r };
  // A line that runs no command (`A=1`, a comment) is judged as itself.
  const commands = target.line.commands.length > 0 ? target.line.commands.map((c) => c.text) : [line];
  const used: R[] = [];
  for (const command of commands) {
    const hit = applying.find(({ rule }) => rule.kind === 'tool' || (rule.kind === 'command' && commandMatches(rule.pattern, command, true)));
    if (!hit) return undefined;
    if (!used.includes(hit.r)) used.push(hit.r);
  }
  return used;
}

function appliesTo(rule: PermissionRule, request: PermissionRequest): boolean {
  if (rule.kind === 'server') return request.tool.startsWith(`mcp__${rule.server}__`);
  if (rule.tool === request.tool) return true;
  return (rule.tool === 'Read' && READ_TOOLS.has(request.tool)) || (rule.tool === 'Edit' && EDIT_TOOLS.has(request.tool));
}

/**
 * Whether the rule matches the call's target as a whole (a Bash command only by an exact rule).
 * `all`: an allow rule's question, so an escaped path must match in every reading.
 */
function matchesTarget(rule: PermissionRule, target: Target, settings: PermissionSettings, all = false): boolean {
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
      if (target.kind !== 'path') return false;
      // Held by either reading of an escaped path; allowed only where every reading is.
      return [target.path, ...target.decoded][all ? 'every' : 'some']((p) => pathMatches(rule.pattern, p, settings));
  }
}
