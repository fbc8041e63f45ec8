/**
 * Small `crypto.getRandomValues` calls served from a pool. The graph library draws 16 random bytes through Web Crypto
 * for every id it makes: a langsmith `RunTree` (uuid7) for each runnable a node invokes, even with tracing off, and a
 * uuid6 per checkpoint; about 20 per run of a two-node graph. Each call is a validated round trip into OpenSSL
 * (~3 µs), together ~8% of a threadless run's CPU (bench/runtime.ts). The pool refills with `randomFillSync`, the same
 * CSPRNG, so the bytes are as random as before; only their fetching is batched, as Node's own `crypto.randomUUID`
 * and the `uuid` package do. Anything but a small `Uint8Array` (other typed arrays, large requests, a wrong `this`)
 * goes to the original method, so its results and errors are unchanged.
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const MAX_POOLED_BYTES = 256;
const POOLED = Symbol.for('graphx.pooledGetRandomValues');

interface WebCrypto {
  getRandomValues<T extends ArrayBufferView | null>(array: T): T;
  [POOLED]?: true;
}

/** Installs the pool on `globalThis.crypto` (once per process; later calls do nothing). */
export function poolSmallRandomValues(): void {
  const webCrypto = (globalThis as { crypto?: WebCrypto }).crypto;
  if (!webCrypto || webCrypto[POOLED]) return;
  const original = webCrypto.getRandomValues;
  const pool = Buffer.allocUnsafeSlow(POOL_BYTES);
  let offset = POOL_BYTES;
  function getRandomValues<T extends ArrayBufferView | null>(this: unknown, array: T): T {
    if (this !== webCrypto || !(array instanceof Uint8Array) || array.byteLength > MAX_POOLED_BYTES) {
      return Reflect.apply(original, this, [array]) as T;
    }
    const length = array.byteLength;
    if (offset + length > POOL_BYTES) {
      randomFillSync(pool);
      offset = 0;
    }
    array.set(pool.subarray(offset, offset + length));
    // Handed-out bytes are overwritten, so no copy of them stays in the process longer than needed.
    pool.fill(0, offset, offset + length);
    offset += length;
    return array;
  }
  Object.defineProperty(webCrypto, 'getRandomValues', {
    value: getRandomValues,
    writable: true,
    configurable: true,
    enumerable: false,
  });
  Object.defineProperty(webCrypto, POOLED, { value: true });
}
