/**
 * The handlers every keel workflow answers the same way, set once for the plain run and the
 * monitor alike: the transcript, events and spec queries (which the model activity and the
 * clients read), and the worker-problem signal.
 */
import { setCurrentDetails, setHandler } from '@temporalio/workflow';
import { eventsQuery, specQuery, transcriptQuery, workerProblemSignal } from './api.js';
import type { Run } from './run-state.js';

export function registerRunHandlers(current: () => Run | undefined, turn: () => number): void {
  setHandler(transcriptQuery, (range) => current()?.transcriptPage(range) ?? { from: 0, messages: [], total: 0, firstHeld: 0 });
  setHandler(eventsQuery, (after) => current()?.eventPage(after) ?? { events: [], firstSeq: 1, lastSeq: 0 });
  setHandler(specQuery, (hash) => current()?.spec(hash) ?? null);
  setHandler(workerProblemSignal, (problem) => {
    if (current()?.status !== 'running') return;
    // Shown until the next turn or tool sets the details again: the run waits for a fixed worker.
    setCurrentDetails(`turn ${turn()}: waiting for a worker that can go on. ${problem.message}`);
  });
}
