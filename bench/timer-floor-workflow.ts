/**
 * The floor for a sleeping monitor's cost in the worker's cache: a workflow that does nothing but
 * wait on a durable timer (or a `wake` signal), then return. Bundled on its own, apart from keel's
 * workflows.
 */
import { condition, defineSignal, setHandler } from '@temporalio/workflow';

export const floorWakeSignal = defineSignal('wake');

export async function floorSleeper(): Promise<void> {
  let woken = false;
  setHandler(floorWakeSignal, () => {
    woken = true;
  });
  await condition(() => woken, '1 day');
}
