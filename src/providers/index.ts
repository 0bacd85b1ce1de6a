/**
 * The model providers a worker can use, by the prefix of an agent's `model`
 * (`openai:...`, `anthropic:...`, `demo:...`).
 */
import type { ModelProvider } from '../core/model.js';
import { createAnthropicProvider } from './anthropic.js';
import { createDemoProvider } from './demo.js';
import { ProviderConfigError, apiKeyVariable, baseUrlVariable } from './errors.js';
import { createOpenAIProvider } from './openai.js';

export { createAnthropicProvider, type AnthropicProviderOptions } from './anthropic.js';
export { createDemoProvider } from './demo.js';
export {
  classifyProviderError,
  callProvider,
  IncompleteStreamError,
  MalformedResponseError,
  ProviderConfigError,
  baseUrlVariable,
  malformedGiveUpMessage,
  providerDisplayName,
  readRetryAfter,
  retryAfterMsFromHeaders,
  type ErrorContext,
  type RetryAfter,
} from './errors.js';
export { createOpenAIProvider, type OpenAIProviderOptions } from './openai.js';

export interface ProviderSettings {
  /** Default: the worker's environment (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`). */
  apiKey?: string;
  /** Default: the worker's environment (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`), else the provider's own. */
  baseURL?: string;
  /** Default per-request timeout in milliseconds; an agent's `modelSettings.timeoutMs` wins. */
  timeoutMs?: number;
}

export interface ProvidersConfig {
  openai?: ProviderSettings;
  anthropic?: ProviderSettings;
}

export interface ProviderRegistry {
  /** The provider for a model name's prefix; throws a (retryable) ProviderConfigError when it cannot. */
  get(provider: string): ModelProvider;
}

export const KNOWN_PROVIDERS = ['openai', 'anthropic', 'demo'] as const;

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
}

/**
 * Providers are built on first use and cached, so a worker that only runs demo agents needs no
 * API key. Environment variables are read at that first use.
 */
export function createProviderRegistry(config: ProvidersConfig = {}): ProviderRegistry {
  const cache = new Map<string, ModelProvider>();

  const settingsFor = (provider: 'openai' | 'anthropic') => {
    const given = config[provider] ?? {};
    const apiKey = nonEmpty(given.apiKey) ?? nonEmpty(process.env[apiKeyVariable(provider)]);
    if (apiKey === undefined) {
      throw new ProviderConfigError(
        `${apiKeyVariable(provider)} is not set in the worker's environment: set it, or use a demo:... model (for example "demo:weather").`,
        provider,
      );
    }
    const baseURL = nonEmpty(given.baseURL) ?? nonEmpty(process.env[baseUrlVariable(provider)]);
    return {
      apiKey,
      ...(baseURL !== undefined && { baseURL }),
      ...(given.timeoutMs !== undefined && { timeoutMs: given.timeoutMs }),
    };
  };

  const build = (provider: string): ModelProvider => {
    switch (provider) {
      case 'openai':
        return createOpenAIProvider(settingsFor('openai'));
      case 'anthropic':
        return createAnthropicProvider(settingsFor('anthropic'));
      case 'demo':
        return createDemoProvider();
      default:
        throw new ProviderConfigError(
          `Unknown model provider "${provider}": the known providers are ${KNOWN_PROVIDERS.join(', ')} (write the agent's model as "provider:model", for example "openai:gpt-4.1").`,
          provider,
        );
    }
  };

  return {
    get(provider) {
      let p = cache.get(provider);
      if (!p) {
        p = build(provider);
        cache.set(provider, p);
      }
      return p;
    },
  };
}
