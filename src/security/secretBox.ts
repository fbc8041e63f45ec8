/**
 * AES-256-GCM for secrets at rest (deployment secrets, OAuth client secrets and tokens). The stored form is
 * `v1:<iv>:<tag>:<ciphertext>` in base64url, so a value is recognisably encrypted in the database.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export class SecretBox {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
    this.key = key;
  }

  encrypt(plaintext: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return ['v1', iv.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join(':');
  }

  decrypt(stored: string): string {
    const [version, iv, tag, ciphertext] = stored.split(':');
    if (version !== 'v1' || !iv || !tag || ciphertext === undefined) throw new Error('Not an encrypted value');
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }

  /** HMAC-SHA256 with a key derived from the box key: signatures (OAuth state) without a second secret. */
  sign(message: string): string {
    const macKey = crypto.createHash('sha256').update(this.key).update('graphx-hmac').digest();
    return crypto.createHmac('sha256', macKey).update(message).digest('base64url');
  }
}

/** Parses GRAPHX_SECRET_KEY (64 hex digits or base64), or reads/creates `<dataDir>/secret-key` (mode 0600). */
export function loadSecretKey(configured: string | null, dataDir: string): Buffer {
  if (configured) {
    return /^[0-9a-fA-F]{64}$/.test(configured) ? Buffer.from(configured, 'hex') : Buffer.from(configured, 'base64');
  }
  const file = path.join(dataDir, 'secret-key');
  if (fs.existsSync(file)) return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'hex');
  fs.mkdirSync(dataDir, { recursive: true });
  const key = crypto.randomBytes(32);
  fs.writeFileSync(file, key.toString('hex'), { mode: 0o600, flag: 'wx' });
  return key;
}

/** SHA-256 of an API key or token, hex: what we store instead of the key. */
export function hashToken(token: string): string {
  return crypto.createHash('sha256').update(token).digest('hex');
}
