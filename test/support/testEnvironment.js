/**
 * The tests' jest environment: Node's, plus one duty at the end of each test file. A stack (API, worker, relay,
 * gateway) whose start outlived its `beforeAll` (the hook timed out while images were being built) was never seen by
 * the file's `afterAll`; left running, its worker polls Temporal after the run and jest never exits. Stacks register
 * a stopper on the file's global (test/support/pipelineStack.ts); teardown runs after every hook of the file and
 * stops what is left, so one slow hook fails its own tests instead of hanging the whole run.
 */
const { TestEnvironment } = require('jest-environment-node');

class GraphxTestEnvironment extends TestEnvironment {
  async teardown() {
    const leftovers = this.global.__graphxOpenStacks;
    if (leftovers && leftovers.size > 0) {
      process.stderr.write(`[test environment] stopping ${leftovers.size} stack(s) the test file left running\n`);
      await Promise.allSettled([...leftovers].map((stop) => stop()));
      leftovers.clear();
    }
    await super.teardown();
  }
}

module.exports = GraphxTestEnvironment;
