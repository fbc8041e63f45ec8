/**
 * A thread's state history as a timeline (newest first), each checkpoint's detail, and time travel: edit the state
 * at a checkpoint as a node (a fork: a new checkpoint whose parent is that one), re-run from a checkpoint.
 */
import type { Client, ThreadState } from '@langchain/langgraph-sdk';
import { useState, type FormEvent } from 'react';
import { ErrorText, When } from '../components/common';
import { useAsync } from '../hooks/useAsync';
import { parseJsonField, showJson } from './jsonText';

export function checkpointIdOf(state: ThreadState): string {
  return state.checkpoint?.checkpoint_id ?? '';
}

function ForkForm(props: {
  client: Client;
  threadId: string;
  state: ThreadState;
  nodes: string[];
  onForked: (checkpointId: string) => void;
}) {
  const [valuesText, setValuesText] = useState(showJson(props.state.values));
  const [asNode, setAsNode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const values = parseJsonField('State', valuesText, {}) as Record<string, unknown>;
      const answer = await props.client.threads.updateState(props.threadId, {
        values,
        checkpointId: checkpointIdOf(props.state),
        asNode: asNode || undefined,
      });
      // The server answers {checkpoint: {...}} (the SDK's type says configurable): either is read.
      const written = answer as { checkpoint?: { checkpoint_id?: string }; configurable?: { checkpoint_id?: string } };
      props.onForked(written.checkpoint?.checkpoint_id ?? written.configurable?.checkpoint_id ?? '');
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="form" onSubmit={(event) => void submit(event)} aria-label="Fork from this checkpoint">
      <label htmlFor="fork-values">State update (JSON)</label>
      <textarea
        id="fork-values"
        rows={8}
        spellCheck={false}
        value={valuesText}
        onChange={(event) => setValuesText(event.target.value)}
      />
      <label htmlFor="fork-as-node">As node</label>
      <select id="fork-as-node" value={asNode} onChange={(event) => setAsNode(event.target.value)}>
        <option value="">(as the graph decides)</option>
        {props.nodes.map((node) => (
          <option key={node} value={node}>
            {node}
          </option>
        ))}
      </select>
      <div className="actions">
        <button type="submit" disabled={busy}>
          Fork with this state
        </button>
      </div>
      <ErrorText error={error} />
    </form>
  );
}

export function HistoryPanel(props: {
  client: Client;
  threadId: string;
  nodes: string[];
  generation: number;
  busy: boolean;
  onRerun: (checkpointId: string) => void;
  onChanged: () => void;
}) {
  const history = useAsync(
    () => props.client.threads.getHistory(props.threadId, { limit: 100 }),
    [props.client, props.threadId, props.generation],
  );
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [forking, setForking] = useState(false);
  const states = history.data ?? [];
  const selected = states.find((state) => checkpointIdOf(state) === selectedId) ?? null;
  return (
    <div className="history">
      <ErrorText error={history.error} />
      <ol className="timeline" aria-label="State history" tabIndex={0}>
        {states.map((state, index) => {
          const id = checkpointIdOf(state);
          const parent = state.parent_checkpoint?.checkpoint_id ?? null;
          const older = states[index + 1];
          // Newest first: a checkpoint whose parent is not the next one down starts a branch (a fork).
          const forked = Boolean(parent && older && checkpointIdOf(older) !== parent);
          const metadata = (state.metadata ?? {}) as { step?: number; source?: string };
          return (
            <li key={id} className={id === selectedId ? 'selected' : undefined}>
              <button
                type="button"
                className="link"
                aria-pressed={id === selectedId}
                onClick={() => setSelectedId(id === selectedId ? null : id)}
              >
                step {metadata.step ?? '?'} · {metadata.source ?? ''} · next: {state.next.length ? state.next.join(', ') : '—'}
              </button>
              {forked && <span className="tag">branch from {parent?.slice(-8)}</span>}
              <span className="mono hint"> {id.slice(-8)} </span>
              <When iso={state.created_at} />
            </li>
          );
        })}
      </ol>
      {selected && (
        <section className="checkpoint" aria-label="Checkpoint detail">
          <h3>
            Checkpoint <span className="mono">{checkpointIdOf(selected)}</span>
          </h3>
          <pre className="json" aria-label="Checkpoint values" tabIndex={0}>
            {showJson(selected.values)}
          </pre>
          {selected.tasks.length > 0 && (
            <ul aria-label="Checkpoint tasks">
              {selected.tasks.map((task) => (
                <li key={task.id}>
                  <span className="mono">{task.name}</span>
                  {task.error ? ` failed: ${task.error}` : ''}
                  {task.interrupts.length > 0 ? ` interrupted: ${showJson(task.interrupts.map((item) => item.value))}` : ''}
                </li>
              ))}
            </ul>
          )}
          <div className="actions">
            <button type="button" disabled={props.busy} onClick={() => props.onRerun(checkpointIdOf(selected))}>
              Re-run from here
            </button>
            <button type="button" className="secondary" aria-expanded={forking} onClick={() => setForking(!forking)}>
              Edit state and fork
            </button>
          </div>
          {forking && (
            <ForkForm
              key={checkpointIdOf(selected)}
              client={props.client}
              threadId={props.threadId}
              state={selected}
              nodes={props.nodes}
              onForked={(checkpointId) => {
                setForking(false);
                setSelectedId(checkpointId || null);
                props.onChanged();
              }}
            />
          )}
        </section>
      )}
    </div>
  );
}
