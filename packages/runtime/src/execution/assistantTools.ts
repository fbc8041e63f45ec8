/**
 * The deployment's assistants as MCP tools (the anchor's `/mcp`): one tool per assistant the caller may see, named
 * after the assistant (sanitised to MCP's tool-name alphabet), described by it, taking the graph's input; calling a
 * tool runs the assistant without a thread (`runs/wait`) with the arguments as input and answers its final values.
 */
import type { Assistant } from '../graphs';
import type { AuthUser } from '../auth/authUser';
import type { RunService } from './runService';
import { toWireJson } from './serialize';

export interface AssistantTool {
  name: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  assistant: Assistant;
}

export interface ToolOutcome {
  isError: boolean;
  /** JSON of the final values, or the run's error as `<name>: <message>`. */
  text: string;
  values?: Record<string, unknown>;
}

// MCP tool names: 1-64 characters of letters, digits, `_`, `-` (and `.`); anything else becomes `_`.
const toolName = (name: string) => name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64) || 'assistant';

/**
 * Tools for `assistants` with their graphs' input schemas (an open object where none is known), names made unique
 * in order (a second "my agent" is "my_agent_2").
 */
export function toolsOf(assistants: Array<{ assistant: Assistant; inputSchema?: Record<string, unknown> }>): AssistantTool[] {
  const taken = new Set<string>();
  return assistants.map(({ assistant, inputSchema }) => {
    let name = toolName(assistant.name);
    for (let n = 2; taken.has(name); n += 1) name = `${toolName(assistant.name).slice(0, 60)}_${n}`;
    taken.add(name);
    return {
      name,
      description: assistant.description ?? `Runs the ${assistant.graph_id} graph and answers its final state.`,
      inputSchema: { ...(inputSchema ?? { additionalProperties: true }), type: 'object' },
      assistant,
    };
  });
}

/**
 * Runs the tool's assistant threadless with `args` as input (custom auth's `threads:create_run` applies as on any
 * run); a failing run is an error result, not a protocol error, so the calling model can read it.
 */
export async function callAssistantTool(
  runService: RunService,
  user: AuthUser | null,
  tool: AssistantTool,
  args: Record<string, unknown>,
  context: unknown,
  signal: AbortSignal,
): Promise<ToolOutcome> {
  const prepared = await runService.prepare(user, null, {
    assistant_id: tool.assistant.assistant_id,
    input: args,
    ...(context === undefined ? {} : { context }),
    stream_mode: ['values'],
    on_disconnect: 'cancel',
  });
  const result = (await runService.wait(prepared, signal)) as Record<string, unknown> | null;
  const failure = result?.__error__ as { error?: string; message?: string } | undefined;
  if (failure) return { isError: true, text: `${failure.error ?? 'Error'}: ${failure.message ?? ''}` };
  // The values as the API shows them (messages as dicts), not as LangChain serializes its classes.
  const text = toWireJson(result);
  const values = JSON.parse(text) as unknown;
  return {
    isError: false,
    text,
    values: values && typeof values === 'object' && !Array.isArray(values) ? (values as Record<string, unknown>) : undefined,
  };
}
