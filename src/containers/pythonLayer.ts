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

/** The environment in revision images (under the runtime user's HOME: the build steps run as that user). */
export const IMAGE_PYTHON_ENV = '/home/graphx/python-env';
const INPUTS = '/home/graphx/python-inputs';
const MANIFESTS = ['pyproject.toml', 'setup.py', 'setup.cfg', 'requirements.txt'];
/** Where the CA bundle of the runtime image is (the host's: pip through a TLS-intercepting proxy needs it). */
const CA_BUNDLE = '/usr/local/share/graphx/ca-certificates.crt';

/** Stages `<context>/python/`: dependencies.json, the helper, the local folders' manifests (a setup.py folder whole). */
export function stagePythonInputs(context: string, appSource: string, python: PythonConfig): void {
  const inputs = path.join(context, 'python');
  fs.mkdirSync(path.join(inputs, 'app'), { recursive: true });
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

/**
 * The Dockerfile lines of the Python layer. `run` wraps a command as a RUN step with the build's env file (secrets, the
 * registry proxy). A Python line the image lacks fails the step naming the ones it has.
 */
export function pythonLayerLines(python: PythonConfig, user: string, run: (command: string) => string): string[] {
  const interpreter = `python${python.version}`;
  const pins = path.posix.join(RUNTIME_HOME, 'packages', 'runtime', 'python', 'requirements.txt');
  const script = [
    `if ! command -v ${interpreter} >/dev/null; then echo "graphx.json \\"python_version\\" ${python.version} cannot be provided by this image: available $(cd /usr/bin && ls python3.* 2>/dev/null | grep -E '^python3\\.[0-9]+$' | sed 's/python//' | tr '\\n' ' ')"; exit 1; fi`,
    `${interpreter} -m venv ${IMAGE_PYTHON_ENV}`,
    `${IMAGE_PYTHON_ENV}/bin/python ${INPUTS}/local_requirements.py ${INPUTS} > ${INPUTS}/app-requirements.txt`,
    `PIP_CERT=${CA_BUNDLE} PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_PROGRESS_BAR=off PIP_NO_CACHE_DIR=1` +
      (python.pipConfigFile ? ` PIP_CONFIG_FILE=${INPUTS}/pip.conf` : '') +
      ` ${IMAGE_PYTHON_ENV}/bin/python -m pip install -r ${pins} -c ${pins} -r ${INPUTS}/app-requirements.txt`,
  ].join(' && ');
  return [`COPY --chown=${user} python/ ${INPUTS}/`, run(script), `ENV GRAPHX_PYTHON=${IMAGE_PYTHON_ENV}/bin/python`];
}
