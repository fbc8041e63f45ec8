#!/usr/bin/env node
/*
 * The registry this project installs from does not serve every platform build of packages with native binaries
 * (e.g. @swc/core-darwin-arm64). npm then leaves those optional packages out of package-lock.json, and `npm ci`
 * refuses the lock file as "out of sync". This adds the missing optional entries, marked with their os/cpu, so npm
 * ci skips them on other platforms as it would with a complete lock. Run after every `npm install`.
 */
const fs = require('node:fs');
const path = require('node:path');

const lockPath = path.resolve(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const packages = lock.packages;

const OS = ['darwin', 'linux', 'win32', 'freebsd', 'android', 'openharmony', 'sunos', 'openbsd', 'netbsd', 'aix'];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el', 'wasm32'];

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((part) => OS.includes(part)) ?? (parts.includes('win32') ? 'win32' : undefined);
  let cpu = parts.find((part) => CPU.includes(part));
  if (!cpu && parts.includes('gnueabihf')) cpu = 'arm';
  if (!cpu && parts.includes('eabi')) cpu = 'arm';
  if (parts.includes('musl') || parts.includes('musleabihf')) return { os, cpu, libc: 'musl' };
  if (parts.includes('gnu') || parts.includes('gnueabihf')) return { os, cpu, libc: 'glibc' };
  return { os, cpu };
}

let added = 0;
for (const [location, entry] of Object.entries(packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = location ? `${location}/node_modules/${name}` : `node_modules/${name}`;
    if (packages[base] || packages[`node_modules/${name}`]) continue;
    const { os, cpu, libc } = platformOf(name);
    if (!cpu) continue;
    const version = String(spec).replace(/^[\^~=]/, '');
    packages[`node_modules/${name}`] = {
      version,
      cpu: [cpu],
      license: entry.license,
      optional: true,
      ...(os ? { os: [os] } : {}),
      ...(libc ? { libc: [libc] } : {}),
    };
    added += 1;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} optional platform entries`);
