/**
 * The handlers every keel workflow answers the same way, set once for the plain run and the
 * monitor alike: the transcript, events and spec queries (which the model activity and the
 * clients read), and the worker-problem signal.
 */
import { setCurrentDetails, setHandler } from '@temporalio/workflow';
import { parsePermissionMode } from '../core/boundary.js';
import { approveSignal, approveUpdate, backgroundReportSignal, clientToolCallsQuery, clientToolResultUpdate, subAgentClientCallsSignal, subAgentEventsSignal, eventsQuery, permissionModeSignal, specQuery, stateQuery, subAgentPendingSignal, transcriptQuery, workerProblemSignal } from './api.js';
import { forwardDecision } from './sub-agents.js';
import type { Background } from './background.js';
import { clientToolRefusal, type ClientTools } from './client-tools.js';
import { refusal } from './approvals.js';
import type { Run } from './run-state.js';
import { recordRejectedSignals, whenRunExists } from './payloads.js';

export function registerRunHandlers(current: () => Run | undefined, background: Background, clientTools: ClientTools): void {
  // A signal whose payload could not be decoded (src/workflows/payloads.ts) is recorded, not delivered.
  recordRejectedSignals((signal, error) =>
    whenRunExists(current, (run) => run.emit(signal === approveSignal.name ? { type: 'approval.rejected', error } : { type: 'signal.rejected', signal, error })),
  );
  setHandler(transcriptQuery, (range) => current()?.transcriptPage(range) ?? { from: 0, messages: [], total: 0, firstHeld: 0 });
  setHandler(eventsQuery, (after) => current()?.eventPage(after) ?? { events: [], firstSeq: 1, lastSeq: 0 });
  setHandler(specQuery, (hash) => current()?.spec(hash) ?? null);
  setHandler(stateQuery, () => current()?.state.snapshot() ?? { version: 0, values: {} });
  setHandler(
    approveUpdate,
    async (decision) => {
      const approvals = current()!.approvals;
      const checked = approvals.check(decision);
      const child = approvals.childOf(checked.callId);
      if (child) await forwardDecision(child, checked);
      else approvals.receive(checked, 'update');
      return { callId: checked.callId, decision: checked.decision, pending: Math.max(0, approvals.undecided() - (child ? 1 : 0)) };
    },
    {
      validator: (decision) => {
        const run = current();
        if (!run) throw refusal('The run has not started yet: no call is waiting for a decision.');
        run.approvals.validate(decision);
      },
    },
  );
  setHandler(approveSignal, (decision) => {
    const run = current();
    const forward = run?.approvals.receiveSignal(decision);
    const child = forward && run?.approvals.childOf(forward.callId);
    if (forward && child) return forwardDecision(child, forward);
  });
  setHandler(clientToolCallsQuery, () => clientTools.list());
  setHandler(subAgentClientCallsSignal, ({ workflowId, calls }) => clientTools.setChild(workflowId, Array.isArray(calls) ? calls : []));
  setHandler(
    clientToolResultUpdate,
    (result) => {
      const checked = clientTools.check(result);
      clientTools.receive(checked);
      return { callId: checked.callId, pending: clientTools.list().length - 1 };
    },
    {
      validator: (result) => {
        if (!current()) throw clientToolRefusal('The run has not started yet: no call is waiting for a client.');
        clientTools.check(result);
      },
    },
  );
  setHandler(backgroundReportSignal, (report) => background.receive(report));
  setHandler(subAgentEventsSignal, ({ workflowId, callId, depth, events }) => {
    const run = current();
    for (const event of Array.isArray(events) ? events : []) run?.emit({ type: 'subagent.event', callId, depth, workflowId, event });
  });
  setHandler(subAgentPendingSignal, ({ workflowId, pending }) => {
    current()?.approvals.setChild(workflowId, Array.isArray(pending) ? pending : []);
  });
  setHandler(permissionModeSignal, (mode) => {
    const run = current();
    if (!run) return;
    const parsed = parsePermissionMode(mode);
    if (!parsed.ok) {
      run.emit({ type: 'approval.rejected', error: parsed.error });
      return;
    }
    run.approvals.mode = parsed.mode;
    run.emit({ type: 'permission.mode', mode: parsed.mode, by: 'signal' });
  });
  setHandler(workerProblemSignal, (problem) => {
    if (current()?.status !== 'running') return;
    // Shown until the next turn or tool sets the details again: the run waits for a fixed worker.
    setCurrentDetails(`turn ${current()?.turns ?? 0}: waiting for a worker that can go on. ${problem.message}`);
  });
}
