/**
 * The floor for bench/approvals.ts: what any Temporal workflow pays to wait for a person's
 * decision, sent as an Update, and then run an activity. The same shape as a keel run whose tool
 * requires approval, with nothing else: one "model" activity, then the status search attribute
 * set to `awaiting_approval` (so the benchmark counts the waiting runs the same way), then a
 * `condition` that an `approve` Update (with a validator, as keel's) satisfies, then the "tool"
 * activity, one more "model" activity, and the result. Activities have empty bodies (the tool's
 * records when it starts). Bundled on its own, apart from keel's workflows.
 */
import { defineSearchAttributeKey } from '@temporalio/common';
import { condition, defineUpdate, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';

export interface ApprovalFloorActivities {
  model(turn: number): Promise<void>;
  tool(callId: string): Promise<string>;
}

/** The same name and receipt as keel's `approve` Update. */
export const floorApproveUpdate = defineUpdate<{ callId: string; decision: 'allow'; pending: number }, [{ callId: string }]>('approve');

const status = defineSearchAttributeKey('KeelStatus', 'KEYWORD');

const { model, tool } = proxyActivities<ApprovalFloorActivities>({ startToCloseTimeout: '2 minutes' });

export async function approvalFloor(callId: string): Promise<string> {
  let waiting = false;
  let decided = false;
  setHandler(
    floorApproveUpdate,
    () => {
      decided = true;
      return { callId, decision: 'allow' as const, pending: 0 };
    },
    {
      validator: (decision) => {
        if (!waiting || decided || decision?.callId !== callId) throw new Error(`Call "${decision?.callId}" is not waiting for a decision.`);
      },
    },
  );
  await model(1);
  waiting = true;
  upsertSearchAttributes([{ key: status, value: 'awaiting_approval' }]);
  await condition(() => decided);
  await tool(callId);
  await model(2);
  return 'done';
}
