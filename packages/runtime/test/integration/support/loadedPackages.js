// Preloaded with `--require` by tests: appends `<pid> <package>` to the file named by GRAPHX_TEST_LOADED_PACKAGES for
// every npm package this process's main thread loads through require(), first load only (a child process that is
// given the same NODE_OPTIONS writes its own pid); and `<pid> node:<name>` once Node has loaded one of the built-in
// modules watched below (undici is materialised by naming a global such as `Response`, not by a require), checked
// every 200 ms.
const fs = require('node:fs');
const Module = require('node:module');
const { isMainThread } = require('node:worker_threads');

const file = process.env.GRAPHX_TEST_LOADED_PACKAGES;
if (file && isMainThread) {
  const seen = new Set();
  const load = Module._load;
  Module._load = function loadRecorded(request, ...rest) {
    const loaded = load.call(this, request, ...rest);
    let resolved = request;
    try {
      resolved = Module._resolveFilename(request, rest[0]);
    } catch {
      // A built-in module or one that did not resolve: named by the request itself.
    }
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(resolved);
    if (match && !seen.has(match[1])) {
      seen.add(match[1]);
      fs.appendFileSync(file, `${process.pid} ${match[1]}\n`);
    }
    return loaded;
  };
  // Built-in modules an agent server loads only when something needs them (a fetch, an https request, a REPL).
  const builtins = {
    'node:undici': 'internal/deps/undici/undici',
    'node:tls': 'NativeModule tls',
    'node:readline': 'NativeModule readline',
  };
  const watch = setInterval(() => {
    for (const [name, entry] of Object.entries(builtins)) {
      if (!process.moduleLoadList.some((loaded) => loaded.endsWith(entry))) continue;
      fs.appendFileSync(file, `${process.pid} ${name}\n`);
      delete builtins[name];
    }
    if (Object.keys(builtins).length === 0) clearInterval(watch);
  }, 200);
  watch.unref();
}
