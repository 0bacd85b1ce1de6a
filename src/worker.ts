/**
 * A keel worker: the agent loop's workflow code plus the activities for a set of agents.
 *
 *   import { createWorker } from 'keel';
 *   const worker = await createWorker({ agents: [myAgent] });
 *   await worker.run();
 */
import { NativeConnection, Runtime, Worker, bundleWorkflowCode, type BundleOptions, type WorkerOptions } from '@temporalio/worker';
import { loadConnectConfig, ServerUnreachableError, type ConnectSettings } from './client/connection.js';
import type { Approver } from './core/approval.js';
import type { AgentDefinition } from './core/define.js';
import type { ModelProvider } from './core/model.js';
import { keelPlugin, payloadGuardPath, workflowsPath } from './plugin.js';
import type { ProvidersConfig } from './providers/index.js';
import { DEFAULT_TASK_QUEUE } from './workflows/api.js';

export { keelPlugin, workflowsPath };

/**
 * What `bundleWorkflowCode` takes to bundle keel's workflow code ahead of time, with the payload
 * converter and workflow interceptor that keep a bad payload from wedging a run:
 * `bundleWorkflowCode({ ...keelBundleOptions, logger })`. (With workflows of your own, use
 * `plugins: [keelPlugin(...)]` instead.)
 */
export const keelBundleOptions: Required<Pick<BundleOptions, 'workflowsPath' | 'payloadConverterPath' | 'workflowInterceptorModules'>> = {
  workflowsPath,
  payloadConverterPath: payloadGuardPath,
  workflowInterceptorModules: [payloadGuardPath],
};

export interface CreateWorkerOptions {
  agents: AgentDefinition[];
  taskQueue?: string;
  /** Connection settings; default: Temporal's environment configuration (TEMPORAL_ADDRESS, ...). */
  connection?: ConnectSettings | NativeConnection;
  namespace?: string;
  /** API keys and base URLs of the providers; default: the worker's environment. */
  providers?: ProvidersConfig | { get(provider: string): ModelProvider };
  /** Pre-built workflow code (`bundleWorkflowCode({ workflowsPath })`), to skip bundling at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Anything else for the Temporal worker (concurrency, tuning, interceptors). */
  workerOptions?: Partial<WorkerOptions>;
  /**
   * Decides calls that need approval before a person is asked (run as an activity, its answer
   * recorded). Returning nothing leaves the call waiting for a person.
   */
  approver?: Approver;
}

export interface KeelWorker {
  worker: Worker;
  taskQueue: string;
  /** Polls until shutdown() (or a fatal error); then closes the connection it opened. */
  run(): Promise<void>;
  /**
   * Runs the worker until `fnOrPromise` settles, then shuts it down and waits for it to stop, as
   * Temporal's `Worker.runUntil`: resolves to the promise's value, or rejects with its error (or
   * the worker's, when the worker fails first).
   */
  runUntil<R>(fnOrPromise: Promise<R> | (() => Promise<R>)): Promise<R>;
  shutdown(): void;
}

/** The one-line way: a Temporal worker with `keelPlugin` for these agents and nothing else. */
export async function createWorker(options: CreateWorkerOptions): Promise<KeelWorker> {
  const taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
  const { nativeConnection, namespace, ownsConnection } = await nativeConnect(options);
  const plugin = keelPlugin({
    agents: options.agents,
    ...(options.providers && { providers: options.providers }),
    ...(options.approver && { approver: options.approver }),
  });
  const { plugins, workflowsPath: ownPath, workflowBundle: ownBundle, ...workerOptions } = options.workerOptions ?? {};
  // Bundled once, with the plugin: the worker runs it, and the model activity replays histories
  // with it on a cache miss (src/activities/conversation-reader.ts), so a cold worker bundles once.
  const workflowBundle =
    options.workflowBundle ??
    ownBundle ??
    (await bundleWorkflowCode({
      workflowsPath: ownPath ?? workflowsPath,
      logger: Runtime.instance().logger,
      plugins: [plugin, ...(plugins ?? [])],
      ...(workerOptions.interceptors?.workflowModules && { workflowInterceptorModules: workerOptions.interceptors.workflowModules }),
      ...(workerOptions.bundlerOptions?.ignoreModules && { ignoreModules: workerOptions.bundlerOptions.ignoreModules }),
      ...(workerOptions.bundlerOptions?.webpackConfigHook && { webpackConfigHook: workerOptions.bundlerOptions.webpackConfigHook }),
    }));
  const worker = await Worker.create({
    connection: nativeConnection,
    namespace,
    taskQueue,
    workflowBundle,
    ...workerOptions,
    plugins: [plugin, ...(plugins ?? [])],
  });

  /** The connection is ours to close when we opened it, once the worker has stopped. */
  async function closingConnection<R>(running: Promise<R>): Promise<R> {
    try {
      return await running;
    } finally {
      if (ownsConnection) await nativeConnection.close();
    }
  }

  return {
    worker,
    taskQueue,
    run: () => closingConnection(worker.run()),
    runUntil: (fnOrPromise) => closingConnection(worker.runUntil(fnOrPromise)),
    shutdown: () => worker.shutdown(),
  };
}

async function nativeConnect(options: CreateWorkerOptions) {
  if (options.connection instanceof NativeConnection) {
    return { nativeConnection: options.connection, namespace: options.namespace ?? 'default', ownsConnection: false };
  }
  const config = loadConnectConfig({ ...options.connection, ...(options.namespace && { namespace: options.namespace }) });
  try {
    const nativeConnection = await NativeConnection.connect(config.connectionOptions);
    return { nativeConnection, namespace: config.namespace, ownsConnection: true };
  } catch (err) {
    throw new ServerUnreachableError(config.connectionOptions.address ?? 'localhost:7233', err);
  }
}
