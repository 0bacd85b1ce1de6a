/** Reading a run's Temporal history the way a person reads it in the UI. */
import { defaultPayloadConverter } from '@temporalio/common';
// The default export: @temporalio/proto is CommonJS, and only that form loads under plain Node ESM.
import proto, { type temporal } from '@temporalio/proto';
import type { RunHandle } from '../../src/client/agent-client.js';

export type History = temporal.api.history.v1.IHistory;
type Payload = temporal.api.common.v1.IPayload;

export function historyOf(run: RunHandle): Promise<History> {
  return run.workflow.fetchHistory();
}

export function decode(payload: Payload | null | undefined): unknown {
  return payload ? defaultPayloadConverter.fromPayload(payload as never) : undefined;
}

export interface ActivityRecord {
  type: string;
  summary: unknown;
  /** The attempt that completed (from the activity's started event). */
  attempt: number | undefined;
  /** Why the attempt before it failed, for a retried activity: a timeout's type (`HEARTBEAT`, `START_TO_CLOSE`, ...) or the failure's message. */
  retriedAfter: string | undefined;
  /** Bytes of the input payloads as stored in history. */
  inputBytes: number;
  input: unknown[];
}

/** The activities of a history, in the order they were scheduled. */
export function activityEvents(history: History): ActivityRecord[] {
  const byScheduledId = new Map<string, ActivityRecord>();
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const payloads = scheduled.input?.payloads ?? [];
      byScheduledId.set(String(event.eventId), {
        type: scheduled.activityType?.name ?? '',
        summary: decode(event.userMetadata?.summary),
        attempt: undefined,
        retriedAfter: undefined,
        inputBytes: payloads.reduce((n, p) => n + (p.data?.length ?? 0), 0),
        input: payloads.map(decode),
      });
    }
    const started = event.activityTaskStartedEventAttributes;
    if (started) {
      const record = byScheduledId.get(String(started.scheduledEventId));
      if (record) {
        record.attempt = started.attempt ?? undefined;
        const last = started.lastFailure;
        const timeout = last?.timeoutFailureInfo?.timeoutType;
        record.retriedAfter = timeout
          ? (proto.temporal.api.enums.v1.TimeoutType[timeout] ?? String(timeout)).replace(/^TIMEOUT_TYPE_/, '')
          : (last?.message ?? undefined);
      }
    }
  }
  return [...byScheduledId.values()];
}

/** Size of the history as the server stores it (events encoded as protobuf). */
export function historyBytes(history: History): number {
  return proto.temporal.api.history.v1.History.encode(history as never).finish().length;
}

/** The history's event types in order, as the UI lists them (`ACTIVITY_TASK_CANCELED`, ...). */
export function eventTypes(history: History): string[] {
  return (history.events ?? []).map((e) => proto.temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? String(e.eventType)).map((name) =>
    name.replace(/^EVENT_TYPE_/, ''),
  );
}
