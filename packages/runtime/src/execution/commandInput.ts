/**
 * A run's `command` as the app's own LangGraph takes it: the API names a `Send` as `{node, input}` (one, or a list
 * mixing node names and Sends); LangGraph JS recognises only its own `Send` objects, so each becomes one, made with
 * the app's class (the JS server's `getLangGraphCommand`). Node names pass as they are.
 */
type SendClass = new (node: string, args: unknown) => unknown;

const isSendSpec = (value: unknown): value is { node: string; input?: unknown } =>
  typeof value === 'object' && value !== null && typeof (value as { node?: unknown }).node === 'string';

export function commandFields(command: Record<string, unknown>, Send: SendClass): Record<string, unknown> {
  if (command.goto === undefined || command.goto === null) return command;
  const gotos = Array.isArray(command.goto) ? command.goto : [command.goto];
  const converted = gotos.map((item) => (isSendSpec(item) ? new Send(item.node, item.input ?? null) : item));
  return { ...command, goto: Array.isArray(command.goto) ? converted : converted[0] };
}
