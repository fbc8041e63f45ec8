import { registryAllowed } from '../../src/containers/buildEgress';

describe("the build proxy's registry allowlist", () => {
  const allowed = ['registry.npmjs.org', '.pkg.example.com'];

  it('allows a listed host, any case, and the subdomains of a leading-dot entry', () => {
    expect(registryAllowed('registry.npmjs.org', allowed)).toBe(true);
    expect(registryAllowed('Registry.NPMJS.org', allowed)).toBe(true);
    expect(registryAllowed('npm.pkg.example.com', allowed)).toBe(true);
  });

  it('refuses look-alikes, other hosts and addresses', () => {
    expect(registryAllowed('registry.npmjs.org.evil.com', allowed)).toBe(false);
    expect(registryAllowed('evilregistry.npmjs.org', allowed)).toBe(false);
    expect(registryAllowed('pkg.example.com', allowed)).toBe(false);
    expect(registryAllowed('10.88.0.1', allowed)).toBe(false);
    expect(registryAllowed('169.254.169.254', allowed)).toBe(false);
  });
});
