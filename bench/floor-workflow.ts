/**
 * The floor for the agent loop's per-turn overhead: the same activity pattern with nothing else.
 * Per turn, one "model" activity, then one parallel batch of k "tool" activities; after the last
 * turn one more "model" activity (the answer). Activities have empty bodies (see turn-overhead.ts).
 * Bundled on its own, apart from keel's workflows.
 */
import { proxyActivities } from '@temporalio/workflow';

export interface FloorActivities {
  model(turn: number): Promise<{ turn: number }>;
  tool(turn: number, index: number): Promise<string>;
}

export interface FloorInput {
  turns: number;
  k: number;
}

const { model, tool } = proxyActivities<FloorActivities>({
  startToCloseTimeout: '2 minutes',
});

export async function floorRun({ turns, k }: FloorInput): Promise<number> {
  for (let turn = 1; turn <= turns; turn++) {
    await model(turn);
    await Promise.all(Array.from({ length: k }, (_, i) => tool(turn, i)));
  }
  await model(turns + 1);
  return turns;
}
