/**
 * The application's own `@langchain/langgraph`, the one its graphs were made with: LangGraph recognises a resume
 * command by its class, and a graph's v3 stream is read with its own release's converters.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { commandFields } from './execution/commandInput';
import { protocolEventKitOf, type ProtocolEventKit } from './execution/protocolFrames';
import { lazy } from './lazy';

export interface AppLangGraph {
  /** The app's Command class; `goto` Sends in the API's `{node, input}` form become its own `Send` objects. */
  commandClass(): Promise<new (fields: Record<string, unknown>) => unknown>;
  /** Its protocol-event pieces, looked up once; null for an older release or an app without LangGraph.js. */
  protocolEventKit(): Promise<ProtocolEventKit | null>;
}

export function appLangGraph(appDir: string): AppLangGraph {
  const appRequire = createRequire(path.join(appDir, 'noop.js'));
  const load = async () => (await import(appRequire.resolve('@langchain/langgraph'))) as Record<string, any>;
  const kit = lazy(() => load().then(protocolEventKitOf, () => null));
  return {
    async commandClass() {
      const { Command, Send } = await load();
      return function AppCommand(fields: Record<string, unknown>) {
        return new Command(commandFields(fields, Send));
      } as unknown as new (fields: Record<string, unknown>) => unknown;
    },
    protocolEventKit: () => kit.get(),
  };
}
