/**
 * Reads the parts of a Claude Code settings file (.claude/settings.json and the like) keel
 * uses: its hooks and its permission lists. What keel cannot run is left out and listed, so
 * a project's existing settings load as they are and the caller can say what was skipped.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { PermissionSettings } from '../core/permissions/index.js';
import { HOOK_EVENTS, type HookEvent, type HooksConfig, unsupportedHookReason } from '../core/hooks.js';
import { checkHooksConfig, checkPermissionSettings } from '../core/schemas.js';

interface ClaudePermissions {
  /** `permissions.defaultMode`, as written ("default", "acceptEdits", "plan", ...). */
  mode?: string;
  allow?: string[];
  ask?: string[];
  deny?: string[];
}

export interface ClaudeSettings {
  hooks: HooksConfig;
  /**
   * The permission lists and mode, checked; `cwd` is the project the file belongs to (the parent
   * of its `.claude` folder), where Claude Code resolves `/path` rules.
   */
  permissions: PermissionSettings;
  /** What was left out, one line each: events keel does not have, handlers it cannot run. */
  skipped: string[];
}

/**
 * Reads a Claude Code settings file. Hooks on events keel does not have (Notification,
 * PreCompact...) and handlers it cannot run (prompt, agent and mcp_tool hooks, `if`, async) are
 * skipped and listed; `"disableAllHooks": true` loads no hooks, as in Claude Code. Everything
 * else must be valid: an unreadable file, invalid JSON or a malformed hook throws an Error
 * naming the file.
 */
export function loadClaudeSettings(file: string): ClaudeSettings {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`Cannot read the Claude Code settings file ${file}: ${(err as Error).message}`);
  }
  let settings: unknown;
  try {
    settings = JSON.parse(text);
  } catch (err) {
    throw new Error(`The Claude Code settings file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (!isObject(settings)) throw new Error(`The Claude Code settings file ${file} must hold a JSON object, like { "hooks": { ... }, "permissions": { ... } }`);

  const skipped: string[] = [];
  let hooks: HooksConfig = {};
  if (settings.disableAllHooks === true) {
    if (settings.hooks !== undefined) skipped.push('all hooks: "disableAllHooks" is true');
  } else {
    hooks = checkHooksConfig(supportedHooks(settings.hooks, skipped), file);
  }
  const dir = dirname(resolve(file));
  const project = basename(dir) === '.claude' ? dirname(dir) : dir;
  const permissions = checkPermissionSettings({ ...readPermissions(settings.permissions, file), cwd: project }, file);
  return { hooks, permissions, skipped };
}

/** The hooks with unsupported events and handlers taken out (and listed); the rest is left for checkHooksConfig to judge. */
function supportedHooks(hooks: unknown, skipped: string[]): unknown {
  if (!isObject(hooks)) return hooks;
  const kept: Record<string, unknown> = {};
  for (const [event, groups] of Object.entries(hooks)) {
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      skipped.push(`hooks.${event}: keel has no ${event} event`);
      continue;
    }
    if (!Array.isArray(groups)) {
      kept[event] = groups;
      continue;
    }
    kept[event] = groups.map((group: unknown, i) => {
      if (!isObject(group) || !Array.isArray(group.hooks)) return group;
      const runnable = group.hooks.filter((handler: unknown, j) => {
        const why = unsupportedHookReason(event as HookEvent, handler);
        if (why) skipped.push(`hooks.${event}[${i}].hooks[${j}]: ${why}`);
        return !why;
      });
      return { ...group, hooks: runnable };
    });
  }
  return kept;
}

function readPermissions(permissions: unknown, file: string): ClaudePermissions {
  if (permissions === undefined) return {};
  if (!isObject(permissions)) throw new Error(`${file}: "permissions" must be an object, like { "allow": ["Bash(npm test)"], "deny": ["Read(./.env)"] }`);
  const out: ClaudePermissions = {};
  for (const list of ['allow', 'ask', 'deny'] as const) {
    const rules = permissions[list];
    if (rules === undefined) continue;
    if (!Array.isArray(rules) || !rules.every((r) => typeof r === 'string')) {
      throw new Error(`${file}: "permissions.${list}" must be an array of rule strings, like ["Bash(git diff *)", "Edit(src/**)"]`);
    }
    out[list] = rules;
  }
  const mode = permissions.defaultMode;
  if (mode !== undefined) {
    if (typeof mode !== 'string') throw new Error(`${file}: "permissions.defaultMode" must be a string, like "default" or "acceptEdits"`);
    out.mode = mode;
  }
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
