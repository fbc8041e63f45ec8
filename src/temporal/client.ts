/** Temporal client construction, shared by the API and the CLI, and the connection settings every connection uses. */
import fs from 'node:fs';
import { Client, Connection, type TLSConfig } from '@temporalio/client';
import type { GraphxConfig } from '../config';

/** What both Connection.connect (client) and NativeConnection.connect (worker) take besides the address. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
}

/**
 * The connection options for `address` under the configured TLS and API key. Certificate files are read here, at
 * connection time, so a rotated certificate is picked up by the next connection without a restart of the config.
 */
export function temporalConnectionOptions(
  address: string,
  config: Pick<GraphxConfig, 'temporalTls' | 'temporalApiKey'>,
): TemporalConnectionOptions {
  const options: TemporalConnectionOptions = { address };
  const tls = config.temporalTls;
  if (tls) {
    const tlsConfig: TLSConfig = {};
    if (tls.serverCaFile) tlsConfig.serverRootCACertificate = fs.readFileSync(tls.serverCaFile);
    if (tls.serverName) tlsConfig.serverNameOverride = tls.serverName;
    if (tls.clientCertFile && tls.clientKeyFile) {
      tlsConfig.clientCertPair = { crt: fs.readFileSync(tls.clientCertFile), key: fs.readFileSync(tls.clientKeyFile) };
    }
    options.tls = Object.keys(tlsConfig).length > 0 ? tlsConfig : true;
  }
  if (config.temporalApiKey) options.apiKey = config.temporalApiKey;
  return options;
}

/** A client of `namespace` at `address`, secured as configured (plaintext for the dev server we start). */
export async function createTemporalClient(
  address: string,
  namespace: string,
  security: Pick<GraphxConfig, 'temporalTls' | 'temporalApiKey'> = { temporalTls: null, temporalApiKey: null },
): Promise<Client> {
  const connection = await Connection.connect(temporalConnectionOptions(address, security));
  return new Client({ connection, namespace });
}

/** Bound of one Temporal call made by a readiness probe. */
const READINESS_DEADLINE_MS = 1_500;

/** A readiness check that asks the frontend for its system info (cheap, any namespace, no permissions needed). */
export function temporalReadinessCheck(connection: Pick<Connection, 'workflowService' | 'withDeadline'>): {
  name: string;
  check: () => Promise<unknown>;
} {
  return {
    name: 'temporal',
    check: () => connection.withDeadline(Date.now() + READINESS_DEADLINE_MS, () => connection.workflowService.getSystemInfo({})),
  };
}
