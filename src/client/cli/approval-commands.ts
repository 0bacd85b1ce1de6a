/**
 * The `keel` commands for approvals: list the calls that wait (`keel pending`), decide them
 * (`keel approve`, `keel deny`), change a run's permission mode (`keel mode`).
 */
import type { ApprovalDecision, PendingApproval } from '../../core/approval.js';
import type { PermissionMode } from '../../core/permissions/index.js';
import type { RunHandle } from '../agent-client.js';
import { CliError, type GlobalOptions } from './common.js';
import { describeRun, width, withClient } from './commands.js';
import { colorEnabled, createStyle, formatPending, formatPendingCall, plural, type Style } from './format.js';
import { parseJsonObject } from './approval-prompt.js';

const out = (line = '') => process.stdout.write(`${line}\n`);
const err = (line = '') => process.stderr.write(`${line}\n`);
const stdoutStyle = (): Style => createStyle(colorEnabled(process.stdout));
const stderrStyle = (): Style => createStyle(colorEnabled(process.stderr));

// ---------------------------------------------------------------------------------------------
// keel pending

export async function pendingCommand(options: { agent?: string; json?: boolean; limit?: number }, globals: GlobalOptions): Promise<number> {
  return withClient(globals, async (client) => {
    const found = await client.pending({ ...(options.agent && { agent: options.agent }), ...(options.limit && { limit: options.limit }) });
    const runs = found.map(({ run, calls, unreachable }) => ({
      workflowId: run.workflowId,
      runId: run.runId,
      agent: run.agent,
      startTime: run.startTime,
      calls,
      ...(unreachable && { unreachable }),
    }));
    if (options.json) out(JSON.stringify(runs, null, 2));
    else for (const line of formatPending(runs, stdoutStyle(), { ...(options.agent && { agent: options.agent }), width: width() })) out(line);
    return 0;
  });
}

// ---------------------------------------------------------------------------------------------
// keel approve / keel deny

export interface DecideOptions {
  all?: boolean;
  /** approve only: the edited arguments, as JSON text. */
  edit?: string;
  remember?: boolean;
  reason?: string;
  signal?: boolean;
}

/** `--edit`'s text as a JSON object, or a CliError that says what is wrong (checked before connecting). */
export function parseEdit(text: string): Record<string, unknown> {
  const parsed = parseJsonObject(text);
  if (typeof parsed === 'string') {
    throw new CliError(`--edit takes the call's new arguments as a JSON object, such as --edit '{"city": "Paris"}'. ${parsed}`);
  }
  return parsed;
}

export async function decideCommand(
  decision: 'allow' | 'deny',
  workflowId: string,
  callId: string | undefined,
  options: DecideOptions,
  globals: GlobalOptions,
): Promise<number> {
  const verb = decision === 'allow' ? 'approve' : 'deny';
  // Everything that can be checked here is checked before the server is contacted.
  const edited = options.edit !== undefined ? parseEdit(options.edit) : undefined;
  if (callId !== undefined && options.all) throw new CliError(`Give a call ID or --all, not both.`);
  if (edited && options.all) throw new CliError(`--edit changes the arguments of one call: give its call ID instead of --all.`);
  if (options.reason !== undefined && options.reason.trim() === '') throw new CliError('--reason is empty: say why, or leave it out.');

  return withClient(globals, async (client) => {
    const handle = client.getHandle(workflowId);
    const summary = await describeRun(handle);
    if (summary.closeTime !== undefined) {
      throw new CliError(`Run ${workflowId} has ended (${summary.status}): no call of it waits for a decision.`);
    }
    const pending = await handle.pending();
    const targets = pickCalls(verb, workflowId, callId, options.all === true, pending);
    if (targets === undefined) return 1;

    const s = stdoutStyle();
    let refused = 0;
    let left: number | undefined;
    for (const target of targets) {
      const d: ApprovalDecision = {
        callId: target.callId,
        decision,
        ...(options.reason !== undefined && { reason: options.reason.trim() }),
        ...(edited && { arguments: edited }),
        ...(options.remember && decision === 'allow' && { remember: true }),
      };
      const what = describeDecision(d, target.tool, s);
      if (options.signal) {
        await handle.signalDecision(d);
        out(`Sent: ${what} ${s.dim('(as a Signal: fire and forget)')}`);
        continue;
      }
      try {
        const receipt = await handle.decide(d);
        left = receipt.pending;
        out(`${decision === 'allow' ? s.green('✓') : s.red('✗')} ${what}`);
      } catch (e) {
        if ((e as Error)?.name !== 'ApprovalRejectedError') throw e;
        refused++;
        err(stderrStyle().red(`✗ The run refused to ${verb} call ${target.callId}: ${(e as Error).message}`));
      }
    }
    if (options.signal) {
      out(
        s.dim(
          `The run takes a valid decision as it arrives; one it cannot apply (a call that no longer waits, arguments that fail the schema) ` +
            `is recorded as an approval.rejected event. Check with: keel status ${workflowId}`,
        ),
      );
    } else if (left !== undefined) {
      out(left > 0 ? `${plural(left, 'call')} of the run still ${left === 1 ? 'waits' : 'wait'}: keel pending` : 'No call of the run waits any more: it goes on.');
    }
    if (decision === 'deny' && options.reason === undefined && refused < targets.length) {
      out(s.dim('(No --reason: the model only reads that the call was denied. A reason helps it do better.)'));
    }
    return refused > 0 ? 1 : 0;
  });
}

/** The calls to decide: the one named, all with --all, or the only one; undefined (after saying why) when that is not clear. */
function pickCalls(
  verb: string,
  workflowId: string,
  callId: string | undefined,
  all: boolean,
  pending: PendingApproval[],
): { callId: string; tool?: string }[] | undefined {
  if (callId !== undefined) {
    // A call of the current turn that has not reached its wait yet may be decided early: the run checks.
    const known = pending.find((p) => p.callId === callId);
    return [{ callId, ...(known && { tool: known.tool }) }];
  }
  if (pending.length === 0) {
    err(`No call of run ${workflowId} waits for a decision (see: keel status ${workflowId}).`);
    return undefined;
  }
  if (all || pending.length === 1) return pending;
  const s = stderrStyle();
  err(`${plural(pending.length, 'call')} of run ${workflowId} wait for a decision:`);
  for (const call of pending) for (const line of formatPendingCall(workflowId, call, s, width())) err(line);
  err(`Pass the call ID (keel ${verb} ${workflowId} <call>), or --all to ${verb} them all.`);
  return undefined;
}

function describeDecision(d: ApprovalDecision, tool: string | undefined, s: Style): string {
  const call = tool ? `${s.bold(tool)} (call ${d.callId})` : `call ${d.callId}`;
  if (d.decision === 'deny') return `denied ${call}${d.reason ? `: ${d.reason}` : ''}`;
  const extras = [
    d.arguments ? `with the arguments ${JSON.stringify(d.arguments)}` : undefined,
    d.remember ? 'and calls like it for the rest of the run' : undefined,
  ].filter((x) => x !== undefined);
  return `allowed ${call}${extras.length ? ` ${extras.join(', ')}` : ''}${d.reason ? ` (${d.reason})` : ''}`;
}

// ---------------------------------------------------------------------------------------------
// keel mode

export async function modeCommand(workflowId: string, mode: PermissionMode, globals: GlobalOptions): Promise<number> {
  return withClient(globals, async (client) => {
    const handle: RunHandle = client.getHandle(workflowId);
    const summary = await describeRun(handle);
    if (summary.closeTime !== undefined) throw new CliError(`Run ${workflowId} has ended (${summary.status}): its permission mode no longer matters.`);
    await handle.setPermissionMode(mode);
    out(`Permission mode of ${workflowId} set to ${mode} (a Signal: it applies to the calls the run decides from now on).`);
    return 0;
  });
}
