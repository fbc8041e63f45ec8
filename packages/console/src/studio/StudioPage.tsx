/**
 * The studio for one deployment's graphs (or, under `graphx dev`, the served app's): assistants and their graph
 * picture, a run form from the input schema, the live run with its nodes lighting up, threads and their history
 * with time travel, interrupts to resume, and a chat mode for graphs with a messages state.
 */
import type { Command, ThreadState } from '@langchain/langgraph-sdk';
import { lazy, Suspense, useCallback, useEffect, useMemo, useState } from 'react';
import { controlPlane } from '../api/controlPlane';
import { ErrorText, Section } from '../components/common';
import { useAsync } from '../hooks/useAsync';
import { Link, navigate, useSearchParams } from '../router';
import { GraphView, type NodeState } from './GraphView';
import { HistoryPanel } from './HistoryPanel';
import { InterruptPanel } from './InterruptPanel';
import { RunForm, type RunFormValues } from './RunForm';
import { RunOutput } from './RunOutput';
import { createStudioClient } from './studioClient';
import { ThreadsPanel } from './ThreadsPanel';
import { useRunStream, type RunRequest } from './useRunStream';

// The SDK's React hook weighs ~100 KiB gzipped: loaded when a chat is opened, not with every studio.
const ChatPanel = lazy(() => import('./ChatPanel').then((module) => ({ default: module.ChatPanel })));

function hasMessages(schema: unknown): boolean {
  const properties = (schema as { properties?: Record<string, { type?: string }> } | null)?.properties;
  return properties?.messages?.type === 'array';
}

export default function StudioPage({ deploymentId }: { deploymentId: string | null }) {
  const { client } = useMemo(() => createStudioClient(deploymentId), [deploymentId]);
  const params = useSearchParams();
  const route = deploymentId ? `/deployments/${deploymentId}/studio` : '/';
  const go = useCallback(
    (change: Record<string, string | null>) => {
      const next = new URLSearchParams(window.location.search);
      for (const [key, value] of Object.entries(change)) {
        if (value) next.set(key, value);
        else next.delete(key);
      }
      navigate(`${route}?${next}`, { replace: true });
    },
    [route],
  );
  const deployment = useAsync(
    () => (deploymentId ? controlPlane.getDeployment(deploymentId) : Promise.resolve(null)),
    [deploymentId],
  );
  const assistants = useAsync(() => client.assistants.search({ limit: 100 }), [client]);
  const assistantId = params.get('assistant') ?? assistants.data?.[0]?.assistant_id ?? null;
  const assistant = assistants.data?.find((item) => item.assistant_id === assistantId) ?? null;
  const threadId = params.get('thread');
  const [xray, setXray] = useState(true);
  const [mode, setMode] = useState<'graph' | 'chat'>('graph');
  const [generation, setGeneration] = useState(0);
  const graph = useAsync(
    () => (assistantId ? client.assistants.getGraph(assistantId, { xray }) : Promise.resolve(null)),
    [client, assistantId, xray],
  );
  const schemas = useAsync(
    () => (assistantId ? client.assistants.getSchemas(assistantId) : Promise.resolve(null)),
    [client, assistantId],
  );
  const threadState = useAsync<ThreadState | null>(
    () => (threadId ? client.threads.getState(threadId) : Promise.resolve(null)),
    [client, threadId, generation],
  );
  const run = useRunStream(client);
  const [actionError, setActionError] = useState<string | null>(null);

  const topNodes = useMemo(
    () =>
      (graph.data?.nodes ?? [])
        .map((node) => String(node.id))
        .filter((id) => id !== '__start__' && id !== '__end__' && !id.includes(':')),
    [graph.data],
  );
  const chatCapable = hasMessages(schemas.data?.state_schema) || hasMessages(schemas.data?.input_schema);
  useEffect(() => {
    if (!chatCapable) setMode('graph');
  }, [chatCapable]);

  // The run's node states; once it ended, the nodes the thread waits on (a breakpoint, an interrupt) show paused.
  const nodeStates = useMemo<ReadonlyMap<string, NodeState>>(() => {
    const states = new Map(run.phase === 'idle' ? [] : run.nodeStates);
    if (run.phase !== 'running') for (const node of threadState.data?.next ?? []) states.set(node, 'interrupted');
    return states;
  }, [run.phase, run.nodeStates, threadState.data]);

  const execute = async (request: Omit<RunRequest, 'assistantId' | 'threadId'>) => {
    if (!assistantId) return;
    setActionError(null);
    try {
      let target = threadId;
      if (!target) {
        target = (await client.threads.create({ graphId: assistant?.graph_id })).thread_id;
        go({ thread: target });
      }
      await run.start({ ...request, assistantId, threadId: target });
    } catch (failure) {
      setActionError((failure as Error).message);
    }
    setGeneration((value) => value + 1);
  };

  const submitRun = (values: RunFormValues) => void execute(values);
  const resume = (command: Command | null) => void execute(command ? { command } : { input: null });
  const rerun = (checkpointId: string) => void execute({ input: null, checkpointId });
  const pending = threadState.data && threadState.data.next.length > 0 && run.phase !== 'running' ? threadState.data : null;
  const title = deployment.data ? deployment.data.name : 'graphx dev';

  return (
    <main className="studio">
      <div className="page-head">
        <h1>Studio · {title}</h1>
        {deploymentId && <Link to={`/deployments/${deploymentId}`}>← Deployment</Link>}
      </div>
      <ErrorText error={assistants.error ?? deployment.error} />
      <div className="inline-form" role="group" aria-label="Graph">
        <div>
          <label htmlFor="assistant">Assistant</label>
          <select
            id="assistant"
            value={assistantId ?? ''}
            onChange={(event) => {
              run.reset();
              go({ assistant: event.target.value, thread: null });
            }}
          >
            {(assistants.data ?? []).map((item) => (
              <option key={item.assistant_id} value={item.assistant_id}>
                {item.name === item.graph_id ? item.graph_id : `${item.name} (${item.graph_id})`}
              </option>
            ))}
          </select>
        </div>
        <label className="inline">
          <input type="checkbox" checked={xray} onChange={(event) => setXray(event.target.checked)} /> Show subgraphs (xray)
        </label>
        {chatCapable && (
          <div role="group" aria-label="Mode" className="segmented">
            <button type="button" aria-pressed={mode === 'graph'} onClick={() => setMode('graph')}>
              Graph
            </button>
            <button type="button" aria-pressed={mode === 'chat'} onClick={() => setMode('chat')}>
              Chat
            </button>
          </div>
        )}
        <button
          type="button"
          className="secondary"
          onClick={() => {
            run.reset();
            go({ thread: null });
          }}
        >
          New thread
        </button>
        <span className="hint">Thread: {threadId ? <span className="mono">{threadId}</span> : 'a new one on the next run'}</span>
      </div>
      <div className="studio-grid">
        <Section title="Graph">
          <ErrorText error={graph.error} />
          {graph.data && assistantId && (
            <GraphView graph={graph.data} states={nodeStates} title={assistant?.graph_id ?? assistantId} />
          )}
        </Section>
        <div>
          {mode === 'chat' && assistantId ? (
            <Section title="Chat">
              <Suspense fallback={<p aria-busy="true">Loading the chat…</p>}>
                <ChatPanel
                  key={`${assistantId}`}
                  client={client}
                  assistantId={assistantId}
                  threadId={threadId}
                  onThreadId={(id) => go({ thread: id })}
                />
              </Suspense>
            </Section>
          ) : (
            <Section title="Run">
              <ErrorText error={schemas.error} />
              {schemas.data !== undefined && (
                <RunForm
                  key={`${assistantId}:${schemas.data ? 'schema' : 'none'}`}
                  inputSchema={schemas.data?.input_schema}
                  nodes={topNodes}
                  busy={run.phase === 'running'}
                  submitLabel={threadId ? 'Run on this thread' : 'Run on a new thread'}
                  onSubmit={submitRun}
                />
              )}
              <ErrorText error={actionError} />
            </Section>
          )}
          {pending && <InterruptPanel key={pending.checkpoint.checkpoint_id} state={pending} busy={false} onResume={resume} />}
          <RunOutput
            phase={pending && run.phase === 'success' ? 'interrupted' : run.phase}
            error={run.error}
            values={run.values}
            events={run.events}
            runId={run.runId}
            onCancel={() => void run.cancel()}
          />
        </div>
      </div>
      <div className="studio-grid">
        <Section title="Threads">
          <ThreadsPanel
            client={client}
            selected={threadId}
            generation={generation}
            onSelect={(id) => {
              run.reset();
              go({ thread: id });
            }}
          />
        </Section>
        {threadId && (
          <Section title="History">
            <HistoryPanel
              client={client}
              threadId={threadId}
              nodes={topNodes}
              generation={generation}
              busy={run.phase === 'running'}
              onRerun={rerun}
              onChanged={() => setGeneration((value) => value + 1)}
            />
          </Section>
        )}
      </div>
    </main>
  );
}
