/** What a run streamed: its phase, the latest values, and every event (namespaced for subgraphs), as text. */
import { StatusBadge } from '../components/common';
import { showJson } from './jsonText';
import type { RunPhase, StreamedEvent } from './useRunStream';

const EVENT_PREVIEW = 400;

function preview(data: unknown): string {
  const text = JSON.stringify(data) ?? '';
  return text.length > EVENT_PREVIEW ? `${text.slice(0, EVENT_PREVIEW)}…` : text;
}

export function RunOutput(props: {
  phase: RunPhase;
  error: string | null;
  values: unknown;
  events: StreamedEvent[];
  runId: string | null;
  onCancel: () => void;
}) {
  if (props.phase === 'idle') return null;
  return (
    <section className="card" aria-label="Run">
      <header className="card-head">
        <h2>Run {props.runId && <span className="mono">{props.runId.slice(0, 8)}</span>}</h2>
        <span aria-label="Run status" aria-live="polite">
          <StatusBadge status={props.phase} />
        </span>
        {props.phase === 'running' && (
          <button type="button" className="danger" onClick={props.onCancel}>
            Cancel run
          </button>
        )}
      </header>
      {props.error && (
        <p className="error" role="alert">
          {props.error}
        </p>
      )}
      <h3>Output</h3>
      <pre className="json" aria-label="Run output" tabIndex={0}>
        {showJson(props.values)}
      </pre>
      <details open>
        <summary>Events ({props.events.length})</summary>
        <ol className="events" aria-label="Run events" tabIndex={0}>
          {props.events.map((item) => (
            <li key={item.seq}>
              <span className="event-name">{item.event}</span>
              {item.namespace.length > 0 && <span className="event-ns"> [{item.namespace.join(' › ')}]</span>}{' '}
              <code>{preview(item.data)}</code>
            </li>
          ))}
        </ol>
      </details>
    </section>
  );
}
