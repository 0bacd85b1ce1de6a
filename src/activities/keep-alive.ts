import type { Context } from '@temporalio/activity';

/**
 * Heartbeats every second (or more often, for a heartbeat timeout under 3 s) until stopped,
 * whatever the activity is waiting for: the first byte of an answer, the rest of a stream. A
 * lost worker is then noticed within the heartbeat timeout, a cancel arrives with the next
 * heartbeat's answer, and a slow answer that keeps coming is never cut by the heartbeat timeout.
 * `details` is sent with each heartbeat (Temporal throttles what reaches the server). The first
 * beat comes after the first interval: an answer within a second costs no heartbeat at all.
 */
export function keepAlive(ctx: Context, details: () => unknown): () => void {
  const every = Math.max(100, Math.min(1_000, (ctx.info.heartbeatTimeoutMs ?? 10_000) / 3));
  const timer = setInterval(() => ctx.heartbeat(details()), every);
  return () => clearInterval(timer);
}
