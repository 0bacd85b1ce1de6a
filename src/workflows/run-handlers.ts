/**
 * The handlers every keel workflow answers the same way, set once for the plain run and the
 * monitor alike: the transcript, events and spec queries (which the model activity and the
 * clients read), and the worker-problem signal.
 */
import { setCurrentDetails, setHandler } from '@temporalio/workflow';
import { PERMISSION_MODES } from '../core/permissions.js';
import { approveSignal, approveUpdate, eventsQuery, permissionModeSignal, specQuery, transcriptQuery, workerProblemSignal } from './api.js';
import type { Run } from './run-state.js';

export function registerRunHandlers(current: () => Run | undefined, turn: () => number): void {
  setHandler(transcriptQuery, (range) => current()?.transcriptPage(range) ?? { from: 0, messages: [], total: 0, firstHeld: 0 });
  setHandler(eventsQuery, (after) => current()?.eventPage(after) ?? { events: [], firstSeq: 1, lastSeq: 0 });
  setHandler(specQuery, (hash) => current()?.spec(hash) ?? null);
  setHandler(
    approveUpdate,
    (decision) => {
      const approvals = current()!.approvals;
      const checked = approvals.check(decision);
      approvals.receive(checked, 'update');
      return { callId: checked.callId, decision: checked.decision, pending: approvals.undecided() };
    },
    {
      validator: (decision) => {
        const run = current();
        if (!run) throw new Error('The run has not started yet: no call is waiting for a decision.');
        run.approvals.check(decision);
      },
    },
  );
  setHandler(approveSignal, (decision) => {
    const run = current();
    if (run) run.approvals.receiveSignal(decision);
  });
  setHandler(permissionModeSignal, (mode) => {
    const run = current();
    if (!run) return;
    if (!PERMISSION_MODES.includes(mode)) {
      run.emit({ type: 'approval.rejected', error: `Unknown permission mode ${JSON.stringify(mode)}: use one of ${PERMISSION_MODES.join(', ')}.` });
      return;
    }
    run.approvals.mode = mode;
    run.emit({ type: 'permission.mode', mode, by: 'signal' });
  });
  setHandler(workerProblemSignal, (problem) => {
    if (current()?.status !== 'running') return;
    // Shown until the next turn or tool sets the details again: the run waits for a fixed worker.
    setCurrentDetails(`turn ${turn()}: waiting for a worker that can go on. ${problem.message}`);
  });
}
