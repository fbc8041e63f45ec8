/** Which base image a revision's runtime image starts from: Docker's official Node images by name, and Python apps. */
import { baseServesPython, OFFLINE_BASE, registryBaseFor } from '../../src/containers/baseImage';

describe('base images', () => {
  test.each([
    ['node:24-bookworm-slim', 'node:22-bookworm-slim'],
    ['docker.io/library/node:24-bookworm-slim', 'docker.io/library/node:22-bookworm-slim'],
    ['library/node:24', 'library/node:22'],
    ['mirror.gcr.io/library/node:24-bookworm-slim', 'mirror.gcr.io/library/node:22-bookworm-slim'],
    ['127.0.0.1:5000/library/node:24-bookworm-slim', '127.0.0.1:5000/library/node:22-bookworm-slim'],
  ])("Docker's official image %s, from Docker Hub or a mirror, gets the asked Node major", (base, forNode22) => {
    expect(registryBaseFor(base, 22)).toBe(forNode22);
    expect(baseServesPython(base)).toBe(false);
  });

  test.each(['acme/node:24', 'ghcr.io/acme/node:24', 'localhost/node:24', 'registry.example/python-node:24'])(
    'an image of someone else named node (%s) is taken as it is, for the default major only, and may serve Python',
    (base) => {
      expect(registryBaseFor(base, 24)).toBe(base);
      expect(registryBaseFor(base, 22)).toBeNull();
      expect(baseServesPython(base)).toBe(true);
    },
  );

  test("the offline base is built, never pulled, and has Debian's Python", () => {
    expect(registryBaseFor(OFFLINE_BASE, 24)).toBeNull();
    expect(baseServesPython(OFFLINE_BASE)).toBe(true);
  });
});
