import { patched } from '@temporalio/workflow';

/**
 * The IDs of keel's `patched()` branches: each marks a change to the workflow's commands that
 * runs recorded before it must not see (see "Changing agents and workflow code safely" in the
 * README). A branch is removed, with `deprecatePatch`, once no run that predates it can be open.
 */
export const Patches = {
  /** Unknown tools and unparseable arguments answered in the workflow, without a tool activity. */
  ValidateInWorkflow: 'keel-validate-in-workflow',
  /** Monitors get the run's start and end checks (input guardrails, SessionStart, UserPromptSubmit, SessionEnd). */
  MonitorRunChecks: 'keel-monitor-run-checks',
  /** An approval's edit with a field the tool does not take is refused (it was run with the field dropped). */
  RefuseUnknownFields: 'keel-refuse-unknown-fields',
} as const;

export type Patch = (typeof Patches)[keyof typeof Patches];

/**
 * True in runs that take the patched branch: new runs, and runs whose history already has the
 * patch's marker; false in runs recorded before it. All of keel's patches go through here.
 */
export function hasPatch(patch: Patch): boolean {
  return patched(patch);
}
