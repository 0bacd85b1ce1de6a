/**
 * The worker-side stages of one tool call as one composed chain, in the shape of the
 * workflow-side pipeline (`src/core/tool-pipeline.ts`) and of Temporal's interceptors: each stage
 * gets the call's state and `next` (the rest of the chain); code before `next` runs before the
 * call, code after it after; a stage that decides returns without calling `next`. The checks
 * activity composes the stages before a call (and the re-check after an edit), the tool activity
 * the stages after it around the tool itself. Which stages make a call need the worker at all is
 * said once, in `src/core/tool-gate.ts` (`needsWorker`), by the same stage names.
 */
export interface WorkerStage<S, R> {
  /** One of `WORKER_STAGES`' names in `src/core/tool-gate.ts` (a middleware's own name for its stage). */
  name: string;
  run(state: S, next: () => Promise<R>): Promise<R>;
}

/** The stages in order around `terminal` (the first stage is outermost): one function, composed once. */
export function composeWorkerStages<S, R>(stages: readonly WorkerStage<S, R>[], terminal: (state: S) => Promise<R>): (state: S) => Promise<R> {
  return (state) => stages.reduceRight<() => Promise<R>>((next, stage) => () => stage.run(state, next), () => terminal(state))();
}
