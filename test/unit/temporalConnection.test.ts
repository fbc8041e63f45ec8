/**
 * TLS and API-key settings of an external Temporal: validated once in the configuration, and turned into the options
 * every connection (client, worker, readiness) is made with. Options only: the dev server cannot serve TLS, so no
 * real mTLS handshake runs here.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { ConfigError } from '@graphx/kit/errors';
import { temporalConnectionOptions } from '../../src/temporal/client';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-tls-'));
const ca = path.join(dir, 'ca.pem');
const cert = path.join(dir, 'client.pem');
const key = path.join(dir, 'client.key');
fs.writeFileSync(ca, 'CA PEM');
fs.writeFileSync(cert, 'CERT PEM');
fs.writeFileSync(key, 'KEY PEM');
const external = { TEMPORAL_ADDRESS: 'temporal.example.com:7233' };

describe('Temporal connection security settings', () => {
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('connects in plaintext when nothing is set', () => {
    const config = loadConfig(external);
    expect(config.temporalTls).toBeNull();
    expect(temporalConnectionOptions('temporal.example.com:7233', config)).toEqual({ address: 'temporal.example.com:7233' });
  });

  it('passes the CA, the client certificate pair and the server name to the connection options (options only, no TLS server here)', () => {
    const config = loadConfig({
      ...external,
      TEMPORAL_TLS_CA_FILE: ca,
      TEMPORAL_TLS_CERT_FILE: cert,
      TEMPORAL_TLS_KEY_FILE: key,
      TEMPORAL_TLS_SERVER_NAME: 'frontend.temporal.internal',
    });
    expect(temporalConnectionOptions(config.temporalAddress as string, config)).toEqual({
      address: 'temporal.example.com:7233',
      tls: {
        serverRootCACertificate: Buffer.from('CA PEM'),
        serverNameOverride: 'frontend.temporal.internal',
        clientCertPair: { crt: Buffer.from('CERT PEM'), key: Buffer.from('KEY PEM') },
      },
    });
  });

  it('turns TLS on with the system roots for TEMPORAL_TLS=1, and for a Temporal Cloud API key', () => {
    expect(temporalConnectionOptions('t:7233', loadConfig({ ...external, TEMPORAL_TLS: '1' }))).toEqual({
      address: 't:7233',
      tls: true,
    });
    expect(temporalConnectionOptions('t:7233', loadConfig({ ...external, TEMPORAL_API_KEY: 'cloud-key' }))).toEqual({
      address: 't:7233',
      tls: true,
      apiKey: 'cloud-key',
    });
  });

  it.each([
    [{ ...external, TEMPORAL_TLS_CERT_FILE: cert }, /TEMPORAL_TLS_KEY_FILE/],
    [{ ...external, TEMPORAL_TLS_CA_FILE: path.join(dir, 'missing.pem') }, /TEMPORAL_TLS_CA_FILE=.*no such file/],
    [{ ...external, TEMPORAL_TLS: '0', TEMPORAL_API_KEY: 'cloud-key' }, /TEMPORAL_TLS=0 contradicts/],
    [{ TEMPORAL_API_KEY: 'cloud-key' }, /set TEMPORAL_ADDRESS too/],
    [{ ...external, TEMPORAL_TLS_SERVER_NAME: 'not a host' }, /TEMPORAL_TLS_SERVER_NAME/],
  ])('refuses an inconsistent setting at start-up with a message naming it (%#)', (env, message) => {
    expect(() => loadConfig(env as Record<string, string>)).toThrow(ConfigError);
    expect(() => loadConfig(env as Record<string, string>)).toThrow(message);
  });
});
