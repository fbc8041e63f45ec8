/**
 * A failed build's status message says what went wrong: podman's error quotes the whole RUN step (graphx's own shell
 * wrapper and the step's whole script), which buried the line of output that names the problem.
 */
import { BUILD_ENV_MOUNT, conciseBuildText, failedBuildOutput } from '../../src/containers/revisionBuildContext';

const SCRIPT = `if ! command -v python3.11 >/dev/null; then echo "no python"; exit 1; fi && python3.11 -m venv /home/graphx/python-env && ${'pip install -r requirements.txt && '.repeat(12)}true`;
const WRAPPED = `set -a && . ${BUILD_ENV_MOUNT} && set +a && ${SCRIPT}`;
const MOUNT = `--mount=type=bind,source=graphx/build.env,target=${BUILD_ENV_MOUNT}`;

describe('conciseBuildText', () => {
  test("podman's error: the step without graphx's wrapper, cut, and what follows it kept whole", () => {
    // The shape of podman 4's message (taken from a failed Python build).
    const message = `build localhost/graphx-app-x:deps: building at STEP "RUN ${MOUNT} /bin/sh -c ${WRAPPED}": while running runtime: exit status 1`;
    const concise = conciseBuildText(message);
    expect(concise).toMatch(
      /^build localhost\/graphx-app-x:deps: building at STEP "RUN if ! command -v python3\.11 .{100,}…": while running runtime: exit status 1$/,
    );
    expect(concise).not.toContain('build.env');
    expect(concise.length).toBeLessThan(360);
  });

  test('a STEP line of the output: the same, one line at a time; other lines unchanged', () => {
    const line = `STEP 6/7: RUN ${MOUNT} ${JSON.stringify(['/bin/sh', '-c', WRAPPED])}`;
    expect(conciseBuildText(line)).toMatch(/^STEP 6\/7: RUN if ! command -v python3\.11 .+…$/);
    expect(conciseBuildText(line)).not.toContain('build.env');
    const output = 'graphx.json "python_version" 3.12 cannot be provided by this image: available 3.11';
    expect(conciseBuildText(output)).toBe(output);
    expect(conciseBuildText('STEP 2/7: USER 10001:10001')).toBe('STEP 2/7: USER 10001:10001');
  });

  test("the output a status message quotes: its last lines without podman's cache notes", () => {
    const lines = [
      'STEP 1/7: FROM localhost/graphx-runtime:0.1.0-a17d3ab0597a',
      'STEP 4/7: WORKDIR /app',
      '--> Using cache d992d6a9432d41ad389770fa2b60703a8a109724f56b9c366c11edce1ded6bee',
      '--> d992d6a9432',
      `STEP 6/7: RUN ${MOUNT} ${JSON.stringify(['/bin/sh', '-c', WRAPPED])}`,
      'graphx.json "python_version" 3.12 cannot be provided by this image: available 3.11',
    ];
    const quoted = failedBuildOutput(lines, 3);
    expect(quoted).toHaveLength(3);
    expect(quoted[0]).toBe('STEP 4/7: WORKDIR /app');
    expect(quoted[1]).toMatch(/^STEP 6\/7: RUN if ! command -v python3\.11 .+…$/);
    expect(quoted[2]).toBe(lines[5]);
  });
});
