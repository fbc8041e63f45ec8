/**
 * A container build whose cache lookup meets a layer removed meanwhile (another build's or a cleanup's removal; seen
 * in CI as podman's "checking if cached image exists from a previous build: getting top layer info: layer not known")
 * is built again instead of ending BUILD_FAILED; any other engine error still fails the build.
 */
import { ContainerEngineError } from '../../src/containers/engine';
import { isLostLayer } from '../../src/builders/image/imageBuilder';

describe('a layer lost under an image build', () => {
  it("is recognised in the engine's message", () => {
    const message =
      'build localhost/graphx-app-x:y: checking if cached image exists from a previous build: getting top layer info: layer not known';
    expect(isLostLayer(new ContainerEngineError(message))).toBe(true);
    expect(isLostLayer(new ContainerEngineError('build x: 3f2a: image not known'))).toBe(true);
  });

  it("is not a build that failed on its own, nor an error that is not the engine's", () => {
    expect(isLostLayer(new ContainerEngineError('build x: RUN yarn install: exit status 1'))).toBe(false);
    expect(isLostLayer(new Error('layer not known'))).toBe(false);
  });
});
