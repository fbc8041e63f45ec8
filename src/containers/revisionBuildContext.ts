/**
 * A revision image's build context and the Dockerfiles that read it. The context is a staging directory of hard links:
 * `repo/` (the clone without .git), `deps/` (only the files that decide the dependency install, so a code-only change
 * finds that layer cached) and `graphx/build.env` (the secrets, bind-mounted into RUN steps, never in a layer).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { APP_DIR, RUNTIME_HOME, RUNTIME_UID } from '@graphx/contract/image';
import { INSTANCE_ENV } from '@graphx/contract/instanceEnv';
import { linkTree } from '@graphx/kit/os/linkTree';
import type { PythonConfig } from '@graphx/contract/pythonConfig';
import { BERRY_BIN } from './runtimeImage';
import { pythonLayerLines, stagePythonInputs } from './pythonLayer';

/** Files that decide what the lock-file install installs: only they are in the dependency layer's context. */
const INSTALL_INPUTS = [
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'pnpm-workspace.yaml',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pnpmfile.cjs',
  '.yarn/releases',
  '.yarn/plugins',
  '.yarn/patches',
];

export interface RevisionDockerfileInput {
  runtimeImage: string;
  /** graphx.json's directory, relative to the repository root (`''` at the root). */
  appSubdir: string;
  /** graphx.json's path relative to the repository root. */
  configPath: string;
  /** The lock file's own install (its own cached layer), or null. */
  lockInstall: string | null;
  /** `install_command` set by the user: run after the whole repository is copied (it may read anything). */
  customInstall: string | null;
  buildCommand: string | null;
  /** graphx.json `dockerfile_lines`, as written. */
  dockerfileLines: string[];
  /** True for yarn 2+ repositories: `yarn` is berry in every step. */
  yarnBerry: boolean;
  /** The app's Python side (its environment is a layer of the dependency image), or null. */
  python: PythonConfig | null;
}

/** Where the build's secrets file is mounted in RUN steps (never copied into a layer). */
export const BUILD_ENV_MOUNT = '/run/graphx/build.env';

/** The two Dockerfiles of a revision image (see revisionDockerfiles). */
export interface RevisionDockerfiles {
  /** The dependency image: the install step, the only one with network (to the package registries). Null: none. */
  dependencies: string | null;
  /** The revision image, `FROM` the dependency image (by id) or the runtime image; its RUN steps have no network. */
  image: string;
}

/** How much of a build step's text a failure message quotes: podman quotes the whole step, a script of many lines. */
const STEP_QUOTED_CHARS = 240;
const BUILD_ENV_PREFIX = `set -a && . ${BUILD_ENV_MOUNT} && set +a && `;

/**
 * An engine's build error (or a line of the build's output) as the user reads it in a revision's status message: the
 * steps it quotes without graphx's own wrapper (the build env mount and the `set -a && . … && set +a &&` before the
 * command) and cut to STEP_QUOTED_CHARS. Podman's message quotes the whole RUN step, so the line that says what went
 * wrong (in the output's last lines) was lost behind several hundred characters of our own shell.
 */
export function conciseBuildText(text: string): string {
  const cut = (step: string) => (step.length > STEP_QUOTED_CHARS ? `${step.slice(0, STEP_QUOTED_CHARS)}…` : step);
  return text
    .replaceAll(`--mount=type=bind,source=graphx/build.env,target=${BUILD_ENV_MOUNT} `, '')
    .replaceAll(`["/bin/sh","-c","${BUILD_ENV_PREFIX}`, '')
    .replaceAll(`/bin/sh -c ${BUILD_ENV_PREFIX}`, '')
    .replace(
      /(building at STEP ")([\s\S]*?)(": (?:while running|exit status|error))/,
      (_, before, step, after) => before + cut(step) + after,
    )
    .replace(/^(STEP \d+\/\d+: )(.*)$/gm, (_, before, step) => before + cut(step));
}

/**
 * The last `count` lines of a failed build's output as its status message quotes them: concise (conciseBuildText), and
 * without podman's own `--> Using cache …` / `--> <id>` notes, which say nothing about what failed.
 */
export function failedBuildOutput(lines: string[], count = 10): string[] {
  return lines
    .filter((line) => !line.startsWith('--> '))
    .slice(-count)
    .map(conciseBuildText);
}

/**
 * The Dockerfiles of a revision image. Layers, from least to most often changed: the lock-file install (its context
 * holds only the package manifests and lock files, so a code-only change finds it cached), the repository, the build
 * command, the user's `dockerfile_lines`, the compilation of TypeScript graphs. The install is built first, as an
 * image of its own, because it is the one step that needs the network: the engine sets a build's network for all of
 * its RUN steps (`RUN --network` is not in podman 4.3), so the rest is a second build without any. Secrets reach
 * install and build steps as a file bind-mounted from the context for that RUN only: no value is in a layer, an
 * `ENV` or the image history.
 */
export function revisionDockerfiles(input: RevisionDockerfileInput & { dependencyImage?: string }): RevisionDockerfiles {
  const appDir = path.posix.join(APP_DIR, input.appSubdir);
  const user = `${RUNTIME_UID}:${RUNTIME_UID}`;
  const run = (command: string) =>
    `RUN --mount=type=bind,source=graphx/build.env,target=${BUILD_ENV_MOUNT} ` +
    JSON.stringify(['/bin/sh', '-c', `set -a && . ${BUILD_ENV_MOUNT} && set +a && ${command}`]);
  const header = (from: string) => [
    `FROM ${from}`,
    `USER ${user}`,
    `ENV ${INSTANCE_ENV.configPath}=${path.posix.join(APP_DIR, input.configPath)}`,
    ...(input.yarnBerry ? [`ENV PATH=${BERRY_BIN}:$PATH`] : []),
    `WORKDIR ${appDir}`,
  ];
  let dependencies: string[] | null = null;
  if (input.lockInstall) {
    dependencies = [...header(input.runtimeImage), `COPY --chown=${user} deps/ ${APP_DIR}/`, run(input.lockInstall)];
  } else if (input.customInstall) {
    // install_command may read any file: it runs on the whole repository.
    dependencies = [...header(input.runtimeImage), `COPY --chown=${user} repo/ ${APP_DIR}/`, run(input.customInstall)];
  }
  if (input.python)
    dependencies = [
      ...(dependencies ?? header(input.runtimeImage)),
      ...pythonLayerLines(input.python, user, run, input.appSubdir),
    ];
  dependencies?.push('');
  const lines = [
    ...(dependencies
      ? [`FROM ${input.dependencyImage ?? DEPENDENCY_IMAGE_PLACEHOLDER}`, `USER ${user}`, `WORKDIR ${appDir}`]
      : header(input.runtimeImage)),
    `COPY --chown=${user} repo/ ${APP_DIR}/`,
  ];
  if (input.buildCommand) lines.push(run(input.buildCommand));
  lines.push(
    ...input.dockerfileLines,
    `USER ${user}`,
    `WORKDIR ${appDir}`,
    // TypeScript graphs compiled now: instances may run on a read-only root filesystem.
    `RUN ["node", "${RUNTIME_HOME}/bin/graphx.js", "runtime-prepare"]`,
    '',
  );
  return { dependencies: dependencies?.join('\n') ?? null, image: lines.join('\n') };
}

/** What the revision image's FROM names until the dependency image is built. */
const DEPENDENCY_IMAGE_PLACEHOLDER = '<dependency image>';

/** `export NAME='value'` lines for sh; names that are not shell variable names are left out. */
export function buildEnvFile(secrets: Array<{ name: string; value: string }>): string {
  return secrets
    .filter((secret) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(secret.name))
    .map((secret) => `export ${secret.name}='${secret.value.replaceAll("'", `'\\''`)}'\n`)
    .join('');
}

/**
 * Stages a build context for `repoDir` beside `stagingDir` and returns its path. Each attempt stages its own (a random
 * suffix): an abandoned attempt of the same revision (its worker died, its step was stopped) must not remove the
 * context this one is sending.
 */
export function stageBuildContext(
  repoDir: string,
  stagingDir: string,
  appSubdir: string,
  python: PythonConfig | null = null,
): string {
  const context = `${stagingDir}-${crypto.randomBytes(4).toString('hex')}`;
  fs.rmSync(context, { recursive: true, force: true });
  fs.mkdirSync(path.join(context, 'graphx'), { recursive: true, mode: 0o700 });
  try {
    linkTree(repoDir, path.join(context, 'repo'), (name) => name !== '.git');
    const appSource = path.join(repoDir, appSubdir);
    const depsTarget = path.join(context, 'deps', appSubdir);
    fs.mkdirSync(depsTarget, { recursive: true });
    for (const input of INSTALL_INPUTS) {
      const source = path.join(appSource, input);
      if (fs.existsSync(source)) linkTree(source, path.join(depsTarget, input));
    }
    if (python) stagePythonInputs(context, appSource, python, repoDir);
    return context;
  } catch (error) {
    fs.rmSync(context, { recursive: true, force: true });
    throw error;
  }
}
