/**
 * The parts of bench/pipeline that follow a user's first hour (issue 24, point 4): LangChain's JavaScript starter (the
 * yarn fixture of test/fixtures/starters, node_version 20 as the real one asks) created → DEPLOYED with its dependency
 * layer built anew and then cached, per runner; and the first start of a fresh clone with podman: the base and runtime
 * images built in an empty store, as `npm start` does on a new machine (mmdebstrap Debian, the Node layer, the runtime
 * image). Targets: ≤ 60 s / ≤ 15 s (container runner) and ≤ 90 s. Prints figures; asserts nothing.
 */
import { initGitRepo } from './support';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../src/config';
import { ensureBaseImage, OFFLINE_BASE } from '../src/containers/baseImage';
import { DockerEngine } from '../src/containers/dockerEngine';
import { writeEngineConfig } from '../src/containers/engineConfig';
import { ensurePodmanService } from '../src/containers/podmanService';
import { ensureRuntimeImage } from '../src/containers/runtimeImage';

const STARTER = path.join(projectRoot, 'test', 'fixtures', 'starters', 'yarn');

/** A git repository of the yarn starter in `dir`, with helpers to give it a package.json of its own or change code. */
export function starterRepo(dir: string): { url: string; freshManifest: () => void; codeChange: (label: string) => void } {
  fs.cpSync(STARTER, dir, { recursive: true, filter: (source) => !source.includes('node_modules') });
  const git = initGitRepo(dir, 'starter');
  return {
    url: `file://${dir}`,
    // A description of its own: no dependency layer of the engine's cache matches, so the install runs for real.
    freshManifest: () => {
      const file = path.join(dir, 'package.json');
      const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as { description?: string };
      manifest.description = `bench ${crypto.randomUUID()}`;
      fs.writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
      git('commit', '-q', '-am', 'a package.json of its own');
    },
    codeChange: (label) => {
      fs.appendFileSync(path.join(dir, 'src', 'agent', 'graph.ts'), `// bench change ${label}\n`);
      git('commit', '-q', '-am', `code-only change ${label}`);
    },
  };
}

/** The starter deployed with its dependency install run anew, then after a code-only change (the layer cached). */
export async function measureStarter(
  workDir: string,
  deploy: (label: string, repoUrl: string) => Promise<{ observed: number }>,
): Promise<{ uncached: number; cached: number }> {
  const repo = starterRepo(path.join(workDir, `starter-${crypto.randomBytes(3).toString('hex')}`));
  repo.freshManifest();
  const uncached = (await deploy('starter-uncached', repo.url)).observed;
  repo.codeChange('cached');
  const cached = (await deploy('starter-cached', repo.url)).observed;
  return { uncached, cached };
}

/**
 * A fresh clone's first start with podman: its own podman service on an empty store, then the base (offline: no
 * image registry answers here) and runtime images, timed; the store is removed afterwards (its service stopped and
 * its mounts undone first).
 */
export async function measureColdImages(): Promise<{ baseMs: number; runtimeMs: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-bench-cold-'));
  const files = writeEngineConfig({ dir: path.join(dir, 'containers'), storeDir: path.join(dir, 'containers', 'store') });
  const service = await ensurePodmanService(files);
  try {
    const engine = new DockerEngine(service.socketPath, files.ulimits);
    const log = (line: string) => console.log(`[cold start]   ${line}`);
    const started = Date.now();
    const baseRef = await ensureBaseImage({ engine, baseImage: OFFLINE_BASE, log });
    const baseMs = Date.now() - started;
    await ensureRuntimeImage({ engine, baseRef, projectRoot, log });
    return { baseMs, runtimeMs: Date.now() - started - baseMs };
  } finally {
    await service.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
