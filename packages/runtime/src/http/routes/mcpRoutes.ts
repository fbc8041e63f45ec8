/**
 * `/mcp`: the anchor's MCP endpoint, Streamable HTTP with `@modelcontextprotocol/sdk`. Stateless as the anchor's
 * (no sessions): each POST gets its own server and transport, so any instance answers any request. Auth already ran
 * (custom auth or tenant key, as on every route); the tools are the assistants the caller's `assistants:search`
 * filter shows, with their graphs' input schemas (assistantTools.ts). GET is 405 (no server-initiated stream without sessions); DELETE is a no-op.
 * The SDK is loaded on the first request, so a deployment nobody calls over MCP does not carry it in memory.
 */
import type Router from '@koa/router';
import Joi from 'joi';
import type Koa from 'koa';
import { DomainError, ValidationError } from '@graphx/kit/errors';
import { HttpExceptionError } from '@graphx/kit/http/httpException';
import { validatePart } from '@graphx/kit/http/validation';
import { callAssistantTool, toolsOf, type AssistantTool } from '../../execution/assistantTools';
import type { Assistant } from '../../graphs';
import { graphSchemaOf } from '../../graphSchemas';
import { filterFor, userOf, type RuntimeServices } from './context';

// One JSON-RPC message or a batch; the SDK validates the messages themselves and answers JSON-RPC errors.
const mcpBody = Joi.alternatives(Joi.object().unknown(true), Joi.array().items(Joi.object().unknown(true)).min(1)).required();

const loadSdk = async () => {
  const [{ Server }, { StreamableHTTPServerTransport }, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return { Server, StreamableHTTPServerTransport, ...types };
};
let sdk: ReturnType<typeof loadSdk> | null = null;
// An MCP client hands every tool to a model: more than this many assistants would drown it anyway.
const MAX_TOOLS = 100;

export function registerMcpRoutes(router: Router, services: RuntimeServices): void {
  /** The assistants the caller's `assistants:search` filter shows (graphx.json's and stored ones), as tools. */
  const visibleTools = async (ctx: Koa.Context): Promise<AssistantTool[]> => {
    const filter = await filterFor(services, ctx, 'assistants', 'search', {});
    const query = { limit: MAX_TOOLS, offset: 0, sort_by: 'created_at', sort_order: 'asc' } as const;
    const { assistants } = await services.assistants.store.search(query, filter);
    return toolsOf(
      await Promise.all(assistants.map(async (assistant) => ({ assistant, inputSchema: await inputSchemaOf(assistant) }))),
    );
  };

  /** The graph's input schema as /assistants/{id}/schemas gives it; none (an open object) when it cannot be read. */
  const inputSchemaOf = async (assistant: Assistant): Promise<Record<string, unknown> | undefined> => {
    try {
      const config = { ...assistant.config, configurable: { ...((assistant.config.configurable as object) ?? {}) } };
      const graph = await services.assistants.graphOf(assistant.graph_id).forRun(config, false);
      const { $schema: _draft, ...schema } = (await graphSchemaOf(graph, services.appImport)).input ?? {};
      return schema;
    } catch {
      return undefined;
    }
  };

  const post = async (ctx: Koa.Context) => {
    const body = validatePart<unknown>(mcpBody, ctx.state.body, 'body');
    const {
      Server,
      StreamableHTTPServerTransport,
      ListToolsRequestSchema,
      CallToolRequestSchema,
      McpError,
      ErrorCode,
      ...types
    } = await (sdk ??= loadSdk());
    checkMcpRequest(ctx, body, types.JSONRPCMessageSchema);
    const tools = await visibleTools(ctx);
    const user = userOf(ctx);
    const server = new Server(
      { name: 'graphx-agent-server', version: String(services.info.version) },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const tool = tools.find((candidate) => candidate.name === request.params.name);
      if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found.`);
      try {
        const context = (request.params as { context?: unknown }).context;
        const outcome = await callAssistantTool(
          services.runService,
          user,
          tool,
          request.params.arguments ?? {},
          context,
          extra.signal,
        );
        return {
          content: [{ type: 'text' as const, text: outcome.text }],
          isError: outcome.isError,
          ...(outcome.values ? { structuredContent: outcome.values } : {}),
        };
      } catch (error) {
        // Refused by the app's auth handler, or an assistant gone: a result the calling model can read.
        if (error instanceof DomainError || error instanceof HttpExceptionError) {
          return { content: [{ type: 'text' as const, text: error.message }], isError: true };
        }
        throw error;
      }
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    ctx.respond = false;
    ctx.res.once('close', () => void server.close());
    await transport.handleRequest(ctx.req, ctx.res, body);
  };

  for (const path of ['/mcp', '/mcp/']) {
    router.post(path, post);
    router.get(path, (ctx) => {
      ctx.status = 405;
      ctx.set('Allow', 'POST, DELETE');
      ctx.body = { detail: 'This MCP endpoint is stateless: POST JSON-RPC messages; there is no stream to GET.' };
    });
    router.delete(path, (ctx) => {
      ctx.status = 204;
    });
  }
}

/** What the MCP transport would refuse without a `detail` (Accept, non-JSON-RPC messages), refused in the API's shape. */
function checkMcpRequest(
  ctx: Koa.Context,
  body: unknown,
  messageSchema: { safeParse: (message: unknown) => { success: boolean } },
): void {
  // What the transport would refuse without a `detail`, refused here in the API's error shape.
  const accept = ctx.get('accept');
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    throw new HttpExceptionError(406, 'Not Acceptable: the Accept header must list application/json and text/event-stream.');
  }
  const messages = Array.isArray(body) ? body : [body];
  const issues = messages.flatMap((message, index) =>
    messageSchema.safeParse(message).success
      ? []
      : [{ loc: Array.isArray(body) ? ['body', index] : ['body'], msg: 'Not a JSON-RPC 2.0 message', type: 'value_error' }],
  );
  if (issues.length > 0) throw new ValidationError(issues);
}
