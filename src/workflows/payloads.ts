/**
 * What a keel workflow sees of a payload that could not be decoded, and where the rejection of a
 * signal that carried one is recorded. The converter and interceptor that produce them are in
 * `payload-guard.ts` (bundled as the worker's payload converter and workflow interceptor module).
 */
import { condition } from '@temporalio/workflow';

/** What a keel workflow sees in place of an argument its converter could not decode. */
export interface Undecodable {
  keelUndecodable: { encoding: string; error: string };
}

export function isUndecodable(value: unknown): value is Undecodable {
  return typeof value === 'object' && value !== null && 'keelUndecodable' in value;
}

/** What was wrong with a handler's arguments, in words, or undefined when every one decoded. */
export function undecodableProblem(kind: string, name: string, args: readonly unknown[]): string | undefined {
  const index = args.findIndex(isUndecodable);
  if (index < 0) return undefined;
  const { encoding, error } = (args[index] as Undecodable).keelUndecodable;
  return `The ${name} ${kind}'s payload${args.length > 1 ? ` (argument ${index + 1})` : ''} could not be decoded (encoding ${encoding}: ${error}); send plain JSON.`;
}

type Recorder = (signal: string, error: string) => void;
let recorder: Recorder | undefined;
const unrecorded: { signal: string; error: string }[] = [];

/** Records a rejected signal in the run, or holds it until the run's handlers are set. */
export function rejectSignal(signal: string, error: string): void {
  if (recorder) recorder(signal, error);
  else unrecorded.push({ signal, error });
}

/**
 * Where rejected signals are recorded: the run's handlers set it once. Rejections that arrived
 * before (in the first workflow task) are recorded then.
 */
export function recordRejectedSignals(record: Recorder): void {
  recorder = record;
  for (const { signal, error } of unrecorded.splice(0)) record(signal, error);
}

/**
 * Records a rejection in the run once it exists (a signal can arrive in the first workflow task,
 * before the run's state is made).
 */
export function whenRunExists<R>(current: () => R | undefined, then: (run: R) => void): void {
  const run = current();
  if (run !== undefined) then(run);
  else void condition(() => current() !== undefined).then(() => then(current()!));
}

