/** The app's threads, searched by status and metadata (as the studio user: a custom auth rule decides what shows). */
import type { Client, Thread } from '@langchain/langgraph-sdk';
import { useState, type FormEvent } from 'react';
import { ErrorText, StatusBadge, When } from '../components/common';
import { useAsync } from '../hooks/useAsync';
import { parseJsonField } from './jsonText';

const STATUSES = ['', 'idle', 'busy', 'interrupted', 'error'];

export function ThreadsPanel(props: {
  client: Client;
  selected: string | null;
  onSelect: (threadId: string) => void;
  generation: number;
}) {
  const [status, setStatus] = useState('');
  const [metadataText, setMetadataText] = useState('');
  const [query, setQuery] = useState<{ status?: string; metadata?: Record<string, unknown> }>({});
  const [formError, setFormError] = useState<string | null>(null);
  const threads = useAsync(
    () =>
      props.client.threads.search({
        status: query.status as Thread['status'] | undefined,
        metadata: query.metadata,
        limit: 50,
        sortBy: 'updated_at',
        sortOrder: 'desc',
      }),
    [props.client, query, props.generation],
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setFormError(null);
    try {
      const metadata = parseJsonField('Metadata', metadataText) as Record<string, unknown> | undefined;
      setQuery({ status: status || undefined, metadata });
    } catch (failure) {
      setFormError((failure as Error).message);
    }
  };
  return (
    <div>
      <form className="inline-form" onSubmit={submit} aria-label="Search threads">
        <div>
          <label htmlFor="thread-status">Status</label>
          <select id="thread-status" value={status} onChange={(event) => setStatus(event.target.value)}>
            {STATUSES.map((value) => (
              <option key={value} value={value}>
                {value || 'any'}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="thread-metadata">Metadata (JSON)</label>
          <input
            id="thread-metadata"
            placeholder='{"owner": "alice"}'
            value={metadataText}
            onChange={(event) => setMetadataText(event.target.value)}
          />
        </div>
        <button type="submit">Search</button>
      </form>
      <ErrorText error={formError ?? threads.error} />
      <table aria-label="Threads">
        <thead>
          <tr>
            <th scope="col">Thread</th>
            <th scope="col">Status</th>
            <th scope="col">Metadata</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {(threads.data ?? []).map((thread) => (
            <tr key={thread.thread_id} aria-selected={thread.thread_id === props.selected}>
              <td>
                <button type="button" className="link mono" onClick={() => props.onSelect(thread.thread_id)}>
                  {thread.thread_id.slice(0, 8)}
                </button>
              </td>
              <td>
                <StatusBadge status={thread.status} />
              </td>
              <td className="mono">{JSON.stringify(thread.metadata ?? {})}</td>
              <td>
                <When iso={thread.updated_at} />
              </td>
            </tr>
          ))}
          {threads.data?.length === 0 && (
            <tr>
              <td colSpan={4}>No thread.</td>
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}
