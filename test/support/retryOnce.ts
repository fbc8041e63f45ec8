/**
 * End-to-end and integration tests get one retry, and the first failure is printed before it (so a flake is seen in
 * the log and can be chased, never hidden). Why: these tests drive real parts (Temporal, PostgreSQL, podman, a
 * kube-apiserver, Chromium) on a shared 2-core machine, and one rare stall of any of them used to fail the whole CI run
 * and so drop every change of a session. A test that fails twice still fails. Unit tests get no retry: a unit flake
 * is a bug.
 */
const testPath = expect.getState().testPath ?? '';
if (/[\\/](e2e|integration|upstream)[\\/]/.test(testPath)) {
  jest.retryTimes(1, { logErrorsBeforeRetry: true });
}
