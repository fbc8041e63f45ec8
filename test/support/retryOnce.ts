/**
 * End-to-end and integration tests get one retry, and the first failure is printed before it (so a flake is seen in
 * the log and can be chased, never hidden). Why: these tests drive real parts (Temporal, PostgreSQL, podman, a
 * kube-apiserver, Chromium) on a shared 2-core machine, and one rare stall of any of them used to fail the whole CI run
 * and so drop every change of a session. A test that fails twice still fails. Unit tests get no retry: a unit flake
 * is a bug. The retry comes at once, before the next test of the file: jest's default retries a failed test after the
 * rest of its describe block, whose later tests may change what it checks (langchainOnDemand's first test asserts that
 * nothing loaded LangChain JS yet; its later ones load it), so such a retry could only fail again.
 */
const testPath = expect.getState().testPath ?? '';
if (/[\\/](e2e|integration|upstream)[\\/]/.test(testPath)) {
  jest.retryTimes(1, { logErrorsBeforeRetry: true, retryImmediately: true });
}
