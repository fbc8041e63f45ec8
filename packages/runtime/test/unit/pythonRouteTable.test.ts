/**
 * A Python `http.app`'s routes are matched in the agent server, so an API request the app does not own never crosses
 * to the executor. The table is what the executor exports (`route_table` in http_app.py) for a FastAPI app with an
 * int, a path and a uuid convertor and a Mount, copied from real Starlette output (the test environment's); the expectations are
 * Starlette's own answers for the same requests.
 */
import { compileRouteTable, matchRoutes } from '../../src/python/pythonHttpApp';

const FASTAPI_TABLE = [
  { pattern: '^/openapi\\.json$', methods: ['GET', 'HEAD'] },
  { pattern: '^/docs$', methods: ['GET', 'HEAD'] },
  { pattern: '^/items/(?P<item_id>[0-9]+)$', methods: ['GET'] },
  { pattern: '^/files/(?P<p>.*)$', methods: ['POST'] },
  {
    pattern: '^/u/(?P<id>[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12})/x\\-y\\.z$',
    methods: ['GET'],
  },
  { pattern: '^/static/(?P<path>.*)$', methods: null },
];

describe('a Python http.app route table, matched in the agent server', () => {
  const routes = compileRouteTable(FASTAPI_TABLE)!;

  it.each([
    ['GET', '/items/42', 'full'],
    ['POST', '/items/42', 'partial'],
    ['GET', '/items/forty-two', 'none'],
    ['POST', '/files/a/b%2Fc.txt', 'full'],
    ['GET', '/u/0f8fad5b-d9cb-469f-a165-70867728950e/x-y.z', 'full'],
    ['GET', '/u/0f8fad5b-d9cb-469f-a165-70867728950e/x-y-z', 'none'],
    ['DELETE', '/static/app.js', 'full'],
    ['HEAD', '/docs', 'full'],
    ['POST', '/threads', 'none'],
    ['GET', '/assistants/agent', 'none'],
  ])('%s %s is %s, as Starlette answers', (method, path, expected) => {
    expect(matchRoutes(routes, method, path)).toBe(expected);
  });

  it('leaves to the executor what only Python can tell: a path that does not decode, a final newline', () => {
    expect(matchRoutes(routes, 'GET', '/items/%E0%A4%A')).toBe('ask');
    expect(matchRoutes(routes, 'GET', '/items/42%0A')).toBe('ask');
  });

  it('gives no table (every request asked) for classes whose meaning differs between the languages, or none exported', () => {
    expect(compileRouteTable([{ pattern: '^/w/(?P<word>\\w+)$', methods: null }])).toBeNull();
    expect(compileRouteTable(null)).toBeNull();
    expect(compileRouteTable([{ pattern: '^/bad/(?P<x>[0-9]+$', methods: null }])).toBeNull();
  });
});
