/**
 * The Python layer of a revision's dependency image (issue 20): the app's virtual environment, made from the
 * executor's pins (in the runtime image) and graphx.json `dependencies`, with the pins as pip constraints so no
 * requirement replaces a package the server relies on. Its context (`python/`) holds only what decides the install —
 * the dependency list, the local folders' manifests and the helper that reads them — so the layer is keyed by the
 * digest of the dependencies and a code-only change finds it cached. The app's own folders come with the repository
 * in the second build and are put in front of the environment's site-packages when the executor starts.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PythonConfig } from '@graphx/contract/pythonConfig';
import { RUNTIME_HOME } from '@graphx/contract/image';
import { linkTree } from '@graphx/kit/os/linkTree';
import { EXECUTOR_PYTHONPATH } from '@graphx/runtime/python/executor';
import { isLocalDependency } from '@graphx/runtime/python/pythonRequirements';
import { usesUv, UV_BUILD_ENV, UV_PROJECT_HELPER, UV_REQUIREMENTS, uvProjectArguments } from '@graphx/runtime/python/uvProject';

/** The environment in revision images (under the runtime user's HOME: the build steps run as that user). */
export const IMAGE_PYTHON_ENV = '/home/graphx/python-env';
const INPUTS = '/home/graphx/python-inputs';
const MANIFESTS = ['pyproject.toml', 'setup.py', 'setup.cfg', 'requirements.txt'];
/** Where the CA bundle of the runtime image is (the host's: pip through a TLS-intercepting proxy needs it). */
const CA_BUNDLE = '/usr/local/share/graphx/ca-certificates.crt';

/** Where a uv project's manifests are staged in the layer's inputs. */
const UV_PROJECT = 'uv-project';
/** Folders never searched for a uv workspace's manifests. */
const NOT_MANIFEST_FOLDERS = new Set(['.git', 'node_modules', '.venv', '__pycache__']);

/**
 * Stages a uv project's manifests (uv.lock, uv.toml and every pyproject.toml under its root, in their places) and the
 * helper that installs them, uv's pin: what `uv export --locked` reads, and nothing else of the repository.
 */
function stageUvInputs(inputs: string, root: string, python: PythonConfig): void {
  fs.copyFileSync(UV_REQUIREMENTS, path.join(inputs, 'uv-requirements.txt'));
  if (!python.source) return;
  fs.copyFileSync(UV_PROJECT_HELPER, path.join(inputs, 'uv_project.py'));
  const target = path.join(inputs, UV_PROJECT);
  const walk = (folder: string): void => {
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const source = path.join(folder, entry.name);
      if (entry.isDirectory() && !NOT_MANIFEST_FOLDERS.has(entry.name)) walk(source);
      const manifest = entry.name === 'pyproject.toml' || (folder === root && ['uv.lock', 'uv.toml'].includes(entry.name));
      if (entry.isFile() && manifest) linkTree(source, path.join(target, path.relative(root, source)));
    }
  };
  walk(root);
}

/**
 * Stages `<context>/python/`: dependencies.json, the helper, the local folders' manifests (a setup.py folder whole);
 * for a uv project, its manifests (stageUvInputs). `repoDir` bounds `source.root` (checked before).
 */
export function stagePythonInputs(context: string, appSource: string, python: PythonConfig, repoDir = appSource): void {
  const inputs = path.join(context, 'python');
  fs.mkdirSync(path.join(inputs, 'app'), { recursive: true });
  if (usesUv(python)) {
    const root = fs.realpathSync(path.resolve(appSource, python.source?.root ?? '.'));
    const repo = fs.realpathSync(repoDir);
    if (root === repo || root.startsWith(repo + path.sep)) stageUvInputs(inputs, root, python);
  }
  fs.writeFileSync(path.join(inputs, 'dependencies.json'), JSON.stringify(python.dependencies));
  fs.copyFileSync(path.join(EXECUTOR_PYTHONPATH, 'local_requirements.py'), path.join(inputs, 'local_requirements.py'));
  for (const dependency of python.dependencies.filter(isLocalDependency)) {
    const folder = path.resolve(appSource, dependency);
    if (folder !== appSource && !folder.startsWith(appSource + path.sep)) continue; // refused by the check before
    const target = path.join(inputs, 'app', path.relative(appSource, folder));
    const setupOnly = fs.existsSync(path.join(folder, 'setup.py')) && !fs.existsSync(path.join(folder, 'pyproject.toml'));
    if (setupOnly) {
      linkTree(folder, target, (name) => name !== '.git');
      continue;
    }
    fs.mkdirSync(target, { recursive: true });
    for (const manifest of MANIFESTS) {
      if (fs.existsSync(path.join(folder, manifest))) linkTree(path.join(folder, manifest), path.join(target, manifest));
    }
  }
  if (python.pipConfigFile) {
    linkTree(path.resolve(appSource, python.pipConfigFile), path.join(inputs, 'pip.conf'));
  }
}

const shellWord = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
const PIP_SETTINGS = `PIP_CERT=${CA_BUNDLE} PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_PROGRESS_BAR=off PIP_NO_CACHE_DIR=1`;
const UV_SETTINGS = [`SSL_CERT_FILE=${CA_BUNDLE}`, 'UV_NO_CACHE=1', ...Object.entries(UV_BUILD_ENV).map(([k, v]) => `${k}=${v}`)];
/** uv for this step only: its pinned wheel (hashes required) in a tool environment removed when the step ends. */
const UV_TOOL = '/tmp/graphx-uv';

/** The commands that install into the new environment: a uv project's lock, or `dependencies` by pip or uv. */
function installCommands(python: PythonConfig, interpreter: string, pins: string, appSubdir: string): string[] {
  const commands: string[] = [];
  if (usesUv(python)) {
    commands.push(
      `${interpreter} -m venv ${UV_TOOL}`,
      `${PIP_SETTINGS} ${UV_TOOL}/bin/python -m pip install --require-hashes --no-deps -r ${INPUTS}/uv-requirements.txt`,
    );
  }
  if (python.source) {
    const args = uvProjectArguments({
      uv: `${UV_TOOL}/bin/uv`,
      root: `${INPUTS}/${UV_PROJECT}`,
      configDir: path.posix.join(
        INPUTS,
        UV_PROJECT,
        path.posix.relative(path.posix.join('/', appSubdir, python.source.root), path.posix.join('/', appSubdir)),
      ),
      pins,
      source: python.source,
    });
    commands.push(
      `${UV_SETTINGS.join(' ')} ${IMAGE_PYTHON_ENV}/bin/python ${INPUTS}/uv_project.py ${args.map(shellWord).join(' ')}`,
    );
  } else {
    commands.push(`${IMAGE_PYTHON_ENV}/bin/python ${INPUTS}/local_requirements.py ${INPUTS} > ${INPUTS}/app-requirements.txt`);
    const requirements = `-r ${pins} -c ${pins} -r ${INPUTS}/app-requirements.txt`;
    commands.push(
      python.installer === 'uv'
        ? `${UV_SETTINGS.join(' ')} ${UV_TOOL}/bin/uv pip install --python ${IMAGE_PYTHON_ENV}/bin/python ${requirements}`
        : `${PIP_SETTINGS}` +
            (python.pipConfigFile ? ` PIP_CONFIG_FILE=${INPUTS}/pip.conf` : '') +
            ` ${IMAGE_PYTHON_ENV}/bin/python -m pip install ${requirements}`,
    );
  }
  if (usesUv(python)) commands.push(`rm -rf ${UV_TOOL}`);
  return commands;
}

/**
 * The Dockerfile lines of the Python layer. `run` wraps a command as a RUN step with the build's env file (secrets, the
 * registry proxy); `appSubdir` is graphx.json's folder in the repository. A Python line the image lacks fails the step
 * naming the ones it has.
 */
export function pythonLayerLines(python: PythonConfig, user: string, run: (command: string) => string, appSubdir = ''): string[] {
  const interpreter = `python${python.version}`;
  const pins = path.posix.join(RUNTIME_HOME, 'packages', 'runtime', 'python', 'requirements.txt');
  const script = [
    `if ! command -v ${interpreter} >/dev/null; then echo "graphx.json \\"python_version\\" ${python.version} cannot be provided by this image: available $(cd /usr/bin && ls python3.* 2>/dev/null | grep -E '^python3\\.[0-9]+$' | sed 's/python//' | tr '\\n' ' ')"; exit 1; fi`,
    `${interpreter} -m venv ${IMAGE_PYTHON_ENV}`,
    ...installCommands(python, interpreter, pins, appSubdir),
  ].join(' && ');
  return [`COPY --chown=${user} python/ ${INPUTS}/`, run(script), `ENV GRAPHX_PYTHON=${IMAGE_PYTHON_ENV}/bin/python`];
}
