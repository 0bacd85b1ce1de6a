/**
 * Connection settings for the worker, the client and the CLI alike, from Temporal's own
 * environment configuration: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TLS
 * settings and profiles (TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE).
 */
import { Connection } from '@temporalio/client';
import { loadClientConnectConfig, type ClientConnectConfig } from '@temporalio/envconfig';

export interface ConnectSettings {
  /** Overrides TEMPORAL_ADDRESS and the profile's address. */
  address?: string;
  /** Overrides TEMPORAL_NAMESPACE and the profile's namespace. */
  namespace?: string;
  /** A profile of the Temporal config file (default: TEMPORAL_PROFILE, then "default"). */
  profile?: string;
}

export function loadConnectConfig(settings: ConnectSettings = {}): Required<ClientConnectConfig> {
  const config = loadClientConnectConfig(settings.profile ? { profile: settings.profile } : {});
  const connectionOptions = { ...config.connectionOptions };
  if (settings.address) connectionOptions.address = settings.address;
  connectionOptions.address ??= 'localhost:7233';
  return { connectionOptions, namespace: settings.namespace ?? config.namespace ?? 'default' };
}

export class ServerUnreachableError extends Error {
  constructor(address: string, cause: unknown) {
    super(
      `Cannot reach the Temporal server at ${address}: ${(cause as Error)?.message ?? cause}\n` +
        'Start the local dev server with ./temporal-dev.sh start, or set TEMPORAL_ADDRESS to your server.',
      { cause },
    );
    this.name = 'ServerUnreachableError';
  }
}

/** A client connection, with an error that says how to start a server when there is none. */
export async function connect(settings: ConnectSettings = {}): Promise<{ connection: Connection; namespace: string }> {
  const config = loadConnectConfig(settings);
  try {
    const connection = await Connection.connect({ ...config.connectionOptions, connectTimeout: '5s' });
    return { connection, namespace: config.namespace };
  } catch (err) {
    throw new ServerUnreachableError(config.connectionOptions.address ?? 'localhost:7233', err);
  }
}
