/**
 * The runtime's pooled `crypto.getRandomValues` (src/runtime/randomPool.ts): small byte arrays still get fresh random
 * bytes on every call, across pool refills, and every other call behaves and fails exactly as Web Crypto's own.
 */
import { poolSmallRandomValues } from '../../src/randomPool';

const webCrypto = globalThis.crypto;
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

beforeAll(() => poolSmallRandomValues());

test('16-byte ids (the library uuids) are filled in place and never repeat, across many pool refills', () => {
  const seen = new Set<string>();
  const counts = new Array<number>(256).fill(0);
  for (let index = 0; index < 5_000; index += 1) {
    const bytes = new Uint8Array(16);
    expect(webCrypto.getRandomValues(bytes)).toBe(bytes);
    seen.add(hex(bytes));
    for (const byte of bytes) counts[byte]! += 1;
  }
  expect(seen.size).toBe(5_000);
  // 80,000 bytes: each value ~312 times; a stuck or zeroed pool would pile up on a few values.
  expect(Math.min(...counts)).toBeGreaterThan(200);
  expect(Math.max(...counts)).toBeLessThan(450);
});

test('odd sizes and subarrays get their bytes, and nothing outside them is touched', () => {
  const buffer = new Uint8Array(64);
  webCrypto.getRandomValues(buffer.subarray(8, 11));
  expect(buffer.subarray(0, 8).every((byte) => byte === 0)).toBe(true);
  expect(buffer.subarray(11).every((byte) => byte === 0)).toBe(true);
  const sizes = [1, 7, 200, 256];
  const filled = sizes.map((size) => webCrypto.getRandomValues(new Uint8Array(size)));
  expect(filled.map((bytes) => bytes.length)).toEqual(sizes);
  expect(filled[3]!.some((byte) => byte !== 0)).toBe(true);
});

test('other arrays and sizes behave as Web Crypto: filled, or refused with the same errors', () => {
  const words = new Uint32Array(8);
  expect(webCrypto.getRandomValues(words)).toBe(words);
  expect(words.some((word) => word !== 0)).toBe(true);
  const large = new Uint8Array(65_536);
  webCrypto.getRandomValues(large);
  expect(large.some((byte) => byte !== 0)).toBe(true);
  expect(() => webCrypto.getRandomValues(new Uint8Array(65_537))).toThrow(
    expect.objectContaining({ name: 'QuotaExceededError' }),
  );
  expect(() => webCrypto.getRandomValues(new Float32Array(4) as unknown as Uint8Array)).toThrow(
    expect.objectContaining({ name: 'TypeMismatchError' }),
  );
  const unbound = webCrypto.getRandomValues;
  expect(() => unbound(new Uint8Array(16))).toThrow();
});

test('installing twice keeps one pool', () => {
  const installed = webCrypto.getRandomValues;
  expect(installed).not.toBe(Object.getPrototypeOf(webCrypto).getRandomValues);
  poolSmallRandomValues();
  expect(webCrypto.getRandomValues).toBe(installed);
});
