/**
 * keel as a Temporal worker plugin: agents added to a worker that may also run its own workflows.
 *
 *   import { Worker } from '@temporalio/worker';
 *   import { keelPlugin } from 'keel';
 *   const worker = await Worker.create({
 *     connection, taskQueue: 'mine',
 *     workflowsPath: require.resolve('./my-workflows'), activities: myActivities,
 *     plugins: [keelPlugin({ agents: [myAgent] })],
 *   });
 *
 * Built on `SimplePlugin` of `@temporalio/plugin`, as the SDK's AI contrib packages are. The
 * worker's own workflows, activities, sinks and interceptors are kept and keel's added; a name
 * that both define is an error, never a silent override. keel's workflow code is bundled with its
 * payload converter and workflow interceptor (`src/workflows/payloads.ts`: no payload a client
 * sends can wedge a run).
 */
import { Client } from '@temporalio/client';
import { SimplePlugin } from '@temporalio/plugin';
import { Runtime, bundleWorkflowCode, type BundleOptions, type InjectedSinks, type ReplayWorkerOptions, type WorkerOptions } from '@temporalio/worker';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentRegistry, ConversationCache, StateCache, createActivities, runKey, type WorkflowBundle } from './activities/index.js';
import type { Approver } from './core/approval.js';
import type { AgentDefinition } from './core/define.js';
import type { ModelProvider } from './core/model.js';
import { createProviderRegistry, type ProvidersConfig } from './providers/index.js';
import type { KeelSinks } from './workflows/api.js';

const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

/**
 * The workflow code keel registers: `dist/src/workflows/index.js` when keel runs compiled (an
 * installed package, `node_modules/.bin/keel`), `src/workflows/index.ts` when it runs from its
 * sources (the repo's tests). Temporal's bundler compiles no TypeScript under node_modules.
 */
export const workflowsPath = fileURLToPath(new URL(`./workflows/index${extension}`, import.meta.url));

/** keel's payload converter and workflow interceptor module, bundled into the workflow code. */
export const payloadGuardPath = fileURLToPath(new URL(`./workflows/payload-guard${extension}`, import.meta.url));

/** A string only keel's payload module puts in a bundle: a bundle without it lacks the module. */
const PAYLOADS_MARK = 'keel-payload-guard/1';

export interface KeelPluginOptions {
  agents: AgentDefinition[];
  /** API keys and base URLs of the providers; default: the worker's environment. */
  providers?: ProvidersConfig | { get(provider: string): ModelProvider };
  /**
   * Decides calls that need approval before a person is asked (run as an activity, its answer
   * recorded). Returning nothing leaves the call waiting for a person.
   */
  approver?: Approver;
  /**
   * A payload converter of the worker's own, composed with keel's: a module whose
   * `payloadConverter` is `tolerantPayloadConverter(yours)` (from `keel/payload-converter`), given here and
   * as the worker's `dataConverter.payloadConverterPath`. Any other converter is refused.
   */
  payloadConverterPath?: string;
}

/** The plugin, for `Worker.create({ plugins: [keelPlugin({ agents })] })` and `bundleWorkflowCode`. */
export function keelPlugin(options: KeelPluginOptions): KeelPlugin {
  return new KeelPlugin(options);
}

export class KeelPlugin extends SimplePlugin {
  private readonly registry: AgentRegistry;
  private readonly cache = new ConversationCache();
  private readonly stateCache = new StateCache();
  private readonly converterPath: string;
  /** The workflow code replays of keel's histories use on a cache miss: the worker's own bundle, else bundled when first needed. */
  private replayBundle: Promise<WorkflowBundle> | undefined;

  constructor(private readonly keel: KeelPluginOptions) {
    super({ name: 'keel' });
    this.registry = new AgentRegistry(keel.agents);
    this.converterPath = keel.payloadConverterPath ?? payloadGuardPath;
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    const configured = super.configureWorker(options);
    this.checkConverter(options.dataConverter?.payloadConverterPath);
    if (options.workflowBundle) this.replayBundle = Promise.resolve(options.workflowBundle);
    // Model activities query their own run on a cache miss; that takes a client.
    const client = new Client({ connection: options.connection, ...(options.namespace && { namespace: options.namespace }) } as ConstructorParameters<typeof Client>[0]);
    return {
      ...configured,
      ...this.workflows(options),
      activities: merged('activity', options.activities, this.activities(client)),
      sinks: merged('sink', options.sinks, this.sinks()) as InjectedSinks<KeelSinks>,
    };
  }

  override configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    const configured = super.configureReplayWorker(options);
    this.checkConverter(options.dataConverter?.payloadConverterPath);
    return { ...configured, ...this.workflows(options), sinks: merged('sink', options.sinks, this.sinks()) as InjectedSinks<KeelSinks> };
  }

  /** Called by the worker's own bundling, and by `bundleWorkflowCode({ ..., plugins: [keelPlugin(...)] })`. */
  override configureBundler(options: BundleOptions): BundleOptions {
    const configured = super.configureBundler(options);
    this.checkConverter(options.payloadConverterPath);
    const composed = configured.workflowsPath !== workflowsPath;
    const userHook = configured.webpackConfigHook;
    return {
      ...configured,
      workflowsPath: composed ? composedWorkflows(configured.workflowsPath) : workflowsPath,
      payloadConverterPath: this.converterPath,
      workflowInterceptorModules: [...(configured.workflowInterceptorModules ?? []), payloadGuardPath],
      ...(composed && {
        // The composed module lives in a directory of its own: let it find the workflow SDK that keel uses.
        webpackConfigHook: (config) => {
          const hooked = userHook ? userHook(config) : config;
          hooked.resolve = { ...hooked.resolve, modules: [...(hooked.resolve?.modules ?? ['node_modules']), sdkModulesDirectory()] };
          return hooked;
        },
      }),
    };
  }

  private workflows(options: WorkerOptions | ReplayWorkerOptions): Pick<WorkerOptions, 'workflowsPath'> {
    const bundle = options.workflowBundle;
    if (bundle) {
      if ('code' in bundle && !bundle.code.includes(PAYLOADS_MARK)) {
        throw new TypeError(
          "keelPlugin: the worker's workflowBundle was built without keel: bundle it with the plugin, " +
            '`bundleWorkflowCode({ workflowsPath, plugins: [keelPlugin({ agents })] })`.',
        );
      }
      return {};
    }
    // keel's workflows, or the worker's own beside them (composed when the worker bundles, in configureBundler).
    return { workflowsPath: options.workflowsPath ?? workflowsPath };
  }

  private checkConverter(path: string | undefined): void {
    if (path === undefined || path === this.converterPath || path === payloadGuardPath) return;
    throw new TypeError(
      `keelPlugin: the worker has a payload converter of its own (${path}). keel needs one that turns a payload it cannot ` +
        "decode into a rejection rather than a stuck run: export `payloadConverter = tolerantPayloadConverter(yours)` (from 'keel/payload-converter') " +
        "from your module and pass its path as keelPlugin's `payloadConverterPath` too.",
    );
  }

  private activities(client: Client): object {
    const providers =
      this.keel.providers && 'get' in this.keel.providers && typeof this.keel.providers.get === 'function'
        ? (this.keel.providers as { get(provider: string): ModelProvider })
        : createProviderRegistry(this.keel.providers as ProvidersConfig | undefined);
    const workflowBundle = () =>
      (this.replayBundle ??= bundleWorkflowCode({ workflowsPath, payloadConverterPath: this.converterPath, workflowInterceptorModules: [payloadGuardPath], logger: Runtime.instance().logger }));
    return createActivities({
      registry: this.registry,
      providers,
      client,
      cache: this.cache,
      stateCache: this.stateCache,
      workflowBundle,
      ...(this.keel.approver && { approver: this.keel.approver }),
    });
  }

  private sinks(): InjectedSinks<KeelSinks> {
    const cache = this.cache;
    const stateCache = this.stateCache;
    return {
      conversation: {
        append: {
          fn: (info, start, messages) => cache.append(runKey(info.workflowId, info.runId), start, messages),
          callDuringReplay: false,
        },
        continued: {
          fn: (info, previousRunId) => cache.rename(runKey(info.workflowId, previousRunId), runKey(info.workflowId, info.runId)),
          callDuringReplay: false,
        },
        carried: {
          fn: (info, segments) => {
            for (const s of segments) cache.fill(runKey(info.workflowId, info.runId), s.start, s.messages);
          },
          callDuringReplay: false,
        },
      },
      state: {
        set: { fn: (info, version, values) => stateCache.put(runKey(info.workflowId, info.runId), { version, values }), callDuringReplay: false },
      },
    };
  }
}

/** The worker's and keel's, with no name in both: keel's are not overridable by accident, nor theirs. */
function merged(kind: string, theirs: object | undefined, ours: object): object {
  const clash = Object.keys(ours).filter((name) => theirs !== undefined && Object.hasOwn(theirs, name));
  if (clash.length > 0) {
    throw new TypeError(`keelPlugin: the worker already has ${kind === 'activity' ? 'activities' : 'sinks'} named like keel's: ${clash.join(', ')}. Rename yours.`);
  }
  return { ...theirs, ...ours };
}

/**
 * A module that exports the worker's own workflows and keel's, written once per pair of paths.
 * A workflow type in both is refused when the workflow code loads, naming it.
 */
function composedWorkflows(theirs: string): string {
  const key = createHash('sha256').update(`${theirs}\n${workflowsPath}`).digest('hex').slice(0, 16);
  const directory = join(tmpdir(), `keel-workflows-${key}`);
  const file = join(directory, 'workflows.cjs');
  mkdirSync(directory, { recursive: true });
  writeFileSync(
    file,
    [
      '// Generated by keelPlugin: the worker\'s own workflows and keel\'s.',
      `const theirs = require(${JSON.stringify(theirs)});`,
      `const keel = require(${JSON.stringify(workflowsPath)});`,
      "const clash = Object.keys(keel).filter((name) => name !== '__esModule' && Object.prototype.hasOwnProperty.call(theirs, name));",
      'if (clash.length > 0) {',
      "  throw new TypeError('keelPlugin: the worker\\'s workflows already export ' + clash.join(', ') + ', the name of a keel workflow: rename yours.');",
      '}',
      'module.exports = Object.assign({}, theirs, keel);',
      '',
    ].join('\n'),
  );
  return file;
}

/** The node_modules directory that holds the `@temporalio/workflow` keel uses. */
function sdkModulesDirectory(): string {
  const entry = createRequire(import.meta.url).resolve('@temporalio/workflow');
  const at = entry.lastIndexOf(`${sep}node_modules${sep}`);
  return at < 0 ? dirname(entry) : entry.slice(0, at + `${sep}node_modules`.length);
}
