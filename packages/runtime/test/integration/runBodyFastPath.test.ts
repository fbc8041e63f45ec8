/**
 * The Joi-free check of run bodies (src/runtime/http/runBodyFastPath.ts) must never accept what the Joi schema
 * refuses, and must return what Joi returns for what it accepts; everything else is left to Joi.
 */
import { validatePart } from '@graphx/kit/http/validation';
import { ValidationError } from '@graphx/kit/errors';
import { fastRunBody } from '../../src/http/runBodyFastPath';
import { runBody } from '../../src/http/schemas';

const input = { messages: [{ role: 'user', content: 'hi' }] };
const bodies: unknown[] = [
  { assistant_id: 'agent', input },
  { assistant_id: 'agent', input, stream_mode: 'updates', extra_field: [1] },
  {
    assistant_id: 'agent',
    input: null,
    stream_mode: ['values', 'messages-tuple'],
    stream_subgraphs: true,
    on_disconnect: 'continue',
    durability: 'exit',
    checkpoint_during: null,
  },
  {
    assistant_id: 'agent',
    command: { resume: 1 },
    config: { configurable: { a: 1 }, tags: ['t'], recursion_limit: 5 },
    metadata: { k: 'v' },
  },
  {
    assistant_id: 'agent',
    multitask_strategy: 'enqueue',
    if_not_exists: 'create',
    context: { user: 'x' },
    config: null,
    metadata: null,
  },
  { assistant_id: 'agent', stream_mode: [] },
  // Invalid: the fast path must refuse them all.
  { assistant_id: '' },
  { input },
  { assistant_id: 7 },
  { assistant_id: 'agent', stream_mode: 'bogus' },
  { assistant_id: 'agent', stream_mode: ['values', 'bogus'] },
  { assistant_id: 'agent', command: [1] },
  { assistant_id: 'agent', config: { tags: [''] } },
  { assistant_id: 'agent', config: { tags: 'a' } },
  { assistant_id: 'agent', config: { recursion_limit: 0 } },
  { assistant_id: 'agent', config: { recursion_limit: 1.5 } },
  { assistant_id: 'agent', config: { configurable: 'x' } },
  { assistant_id: 'agent', metadata: [] },
  { assistant_id: 'agent', on_disconnect: 'later' },
  { assistant_id: 'agent', durability: 'never' },
  { assistant_id: 'agent', checkpoint_during: 'yes' },
  { assistant_id: 'agent', multitask_strategy: 'queue' },
  { assistant_id: 'agent', if_not_exists: 'maybe' },
  // Valid only through Joi's conversion: left to Joi.
  { assistant_id: 'agent', stream_subgraphs: 'true' },
  { assistant_id: 'agent', config: { recursion_limit: '5' } },
  [{ assistant_id: 'agent' }],
  null,
];

function joi(body: unknown): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: validatePart(runBody, body, 'body') };
  } catch (error) {
    if (error instanceof ValidationError) return { ok: false };
    throw error;
  }
}

test.each(bodies.map((body) => [JSON.stringify(body), body]))('the fast run-body check agrees with Joi on %s', (_name, body) => {
  const fast = fastRunBody(body);
  const reference = joi(body);
  if (fast === null) {
    // Refused by the fast path: Joi decides. Only the converted-type bodies above may still be valid.
    const mustBeInvalid = !JSON.stringify(body).match(/"true"|"5"|^\[/);
    if (mustBeInvalid) expect(reference.ok).toBe(false);
    return;
  }
  expect(reference).toEqual({ ok: true, value: fast });
});

test('the fast run-body check takes every well-typed body the SDKs send', () => {
  expect(bodies.slice(0, 6).every((body) => fastRunBody(body) !== null)).toBe(true);
});
