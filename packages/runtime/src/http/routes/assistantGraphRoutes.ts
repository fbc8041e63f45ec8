/**
 * What debugging UIs draw an assistant with: its graph (`xray` expands subgraphs), its JSON schemas, and its
 * subgraphs' schemas (under a namespace, optionally recursive). A factory graph is built with the assistant's config.
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import { validatePart } from '@graphx/kit/http/validation';
import type { Assistant, RunnableGraph } from '../../graphs';
import { graphSchemaOf } from '../../graphSchemas';
import { staticSchemaAt } from '../../staticGraphSchemas';
import { assistantGraphQuery, assistantSubgraphParams, assistantSubgraphsQuery } from '../assistantSchemas';
import type { RuntimeServices } from './context';
import { readAssistant } from './assistantRoutes';

interface DrawableGraph {
  getGraphAsync(config: Record<string, unknown>): Promise<{ toJSON(): unknown }>;
  getSubgraphsAsync(namespace?: string, recurse?: boolean): AsyncIterable<[string, unknown]>;
}

async function compiledGraphOf(services: RuntimeServices, assistant: Assistant): Promise<RunnableGraph & DrawableGraph> {
  const config = { ...assistant.config, configurable: { ...((assistant.config.configurable as object) ?? {}) } };
  return (await services.assistants.graphOf(assistant.graph_id).forRun(config, false)) as RunnableGraph & DrawableGraph;
}

function schemasBody(graphId: string, schema: Awaited<ReturnType<typeof graphSchemaOf>>) {
  return {
    graph_id: graphId,
    input_schema: schema.input,
    output_schema: schema.output,
    state_schema: schema.state,
    config_schema: schema.config,
    // As the anchor's JS server: configSchema and contextSchema are one thing in LangGraph.js.
    context_schema: schema.context !== undefined ? schema.context : schema.config,
  };
}

export function registerAssistantGraphRoutes(router: Router, services: RuntimeServices): void {
  router.get('/assistants/:assistantId/graph', async (ctx) => {
    const { xray } = validatePart<{ xray?: boolean | number }>(assistantGraphQuery, { ...ctx.query }, 'query');
    const assistant = await readAssistant(services, ctx);
    const graph = await compiledGraphOf(services, assistant);
    const drawable = await graph.getGraphAsync({ configurable: assistant.config.configurable ?? {}, xray: xray || undefined });
    ctx.body = drawable.toJSON();
  });

  /** The type checker's schema of the assistant's graph or of its subgraph at `namespace` (read once per graph). */
  const fromSource = (assistant: Assistant, namespace?: string) => async () => {
    const schemas = await services.assistants.graphOf(assistant.graph_id).staticSchemas();
    return schemas && staticSchemaAt(schemas, namespace);
  };

  router.get('/assistants/:assistantId/schemas', async (ctx) => {
    const assistant = await readAssistant(services, ctx);
    const graph = await compiledGraphOf(services, assistant);
    ctx.body = schemasBody(assistant.graph_id, await graphSchemaOf(graph, services.appImport, fromSource(assistant)));
  });

  const subgraphs = async (ctx: Koa.Context) => {
    const { namespace } = validatePart<{ namespace?: string }>(assistantSubgraphParams, ctx.params, 'path');
    const { recurse } = validatePart<{ recurse?: boolean }>(assistantSubgraphsQuery, { ...ctx.query }, 'query');
    const assistant = await readAssistant(services, ctx);
    const graph = await compiledGraphOf(services, assistant);
    const result: Record<string, unknown> = {};
    for await (const [name, subgraph] of graph.getSubgraphsAsync(namespace, Boolean(recurse))) {
      const schema = await graphSchemaOf(subgraph, services.appImport, fromSource(assistant, name));
      // The SDK's GraphSchema keys, and the anchor JS server's own (state, input, output, config) beside them.
      result[name] = { ...schemasBody(assistant.graph_id, schema), ...schema };
    }
    ctx.body = result;
  };
  router.get('/assistants/:assistantId/subgraphs', subgraphs);
  router.get('/assistants/:assistantId/subgraphs/:namespace', subgraphs);
}
