/**
 * The permission policy, in modules: `decision.ts` decides one call (the order of a decision is
 * documented at its top), `rules.ts` holds the types, rule syntax and settings check,
 * `commands.ts` Bash commands, `paths.ts` paths, `targets.ts` what a call is about.
 */

export { checkPermission, rememberRule } from './decision.js';
export { splitCommand } from './commands.js';
export { normalizePath } from './paths.js';
export {
  mostRestrictive,
  parseRule,
  PERMISSION_MODES,
  type PermissionDecision,
  type PermissionMode,
  type PermissionRequest,
  type PermissionRule,
  type PermissionSettings,
  type PermissionVerdict,
} from './rules.js';
