/**
 * Size of history events as the server stores them (protobuf-encoded). Like historyBytes() in
 * test/support/history.ts, but loading @temporalio/proto (CommonJS) through its default export,
 * which is what works under plain Node ESM / tsx.
 */
import proto from '@temporalio/proto';

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

export function encodedSize(events: HistoryEvent[]): number {
  return proto.temporal.api.history.v1.History.encode({ events }).finish().length;
}
