/**
 * How the engine's failures are read. The "does not exist in database" answer is the one podman gave in a CI run
 * (stop 34) when a deployment's container was removed between the list of containers and its inspect: a 500 that
 * means "gone", which must not fail the list.
 */
import { engineError, isNoSuchContainer } from '../../src/containers/dockerErrors';

/** An error shaped as dockerode rejects with: the HTTP status and the engine's JSON body. */
function dockerodeError(statusCode: number, message: string): Error {
  return Object.assign(new Error(`(HTTP code ${statusCode}) unexpected - ${message}`), { statusCode, json: { message } });
}

describe('isNoSuchContainer', () => {
  it('reads a 404 as gone', () => {
    expect(isNoSuchContainer(dockerodeError(404, 'no such container'))).toBe(true);
  });

  it('reads podman’s 500 for a container removed during the request as gone', () => {
    const id = 'fbfbcca8359925d3690090d1405d91298d46a4add7314f3b1c343a6a63817200';
    expect(isNoSuchContainer(dockerodeError(500, `container ${id} does not exist in database: no such container`))).toBe(true);
  });

  it('keeps every other failure a failure', () => {
    expect(isNoSuchContainer(dockerodeError(500, 'database is locked'))).toBe(false);
    expect(isNoSuchContainer(dockerodeError(409, 'container is running'))).toBe(false);
    expect(isNoSuchContainer(Object.assign(new Error('connect ECONNREFUSED /run/podman.sock'), { code: 'ECONNREFUSED' }))).toBe(
      false,
    );
  });

  it('engineError keeps the engine’s own message', () => {
    const error = engineError('inspect container abc', dockerodeError(500, 'database is locked'));
    expect(error.message).toBe('inspect container abc: database is locked');
  });
});
