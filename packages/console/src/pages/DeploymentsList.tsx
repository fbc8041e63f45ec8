/** Every deployment of the organization: status, active revision, URL, last update. */
import { useEffect, useState } from 'react';
import { controlPlane } from '../api/controlPlane';
import { ErrorText, StatusBadge, When } from '../components/common';
import { useAsync } from '../hooks/useAsync';
import { Link } from '../router';

const PAGE_SIZE = 50;
const REFRESH_MS = 5000;

export function DeploymentsList() {
  const [filter, setFilter] = useState('');
  const [offset, setOffset] = useState(0);
  const page = useAsync(
    () => controlPlane.listDeployments({ name_contains: filter.trim() || undefined, limit: PAGE_SIZE, offset }),
    [filter, offset],
  );
  const { reload } = page;
  useEffect(() => {
    const timer = setInterval(reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload]);
  const deployments = page.data?.resources ?? [];
  return (
    <main>
      <div className="page-head">
        <h1>Deployments</h1>
        <Link to="/deployments/new" className="button">
          New deployment
        </Link>
      </div>
      <label htmlFor="name-filter">Name contains</label>
      <input
        id="name-filter"
        type="search"
        value={filter}
        onChange={(event) => {
          setFilter(event.target.value);
          setOffset(0);
        }}
      />
      <ErrorText error={page.error} />
      <table aria-label="Deployments">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col">Active revision</th>
            <th scope="col">URL</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {deployments.map((deployment) => (
            <tr key={deployment.id}>
              <td>
                <Link to={`/deployments/${deployment.id}`}>{deployment.name}</Link>
              </td>
              <td>
                <StatusBadge status={deployment.status} />
              </td>
              <td className="mono">{deployment.active_revision_id?.slice(0, 8) ?? '—'}</td>
              <td className="mono">{deployment.url ?? '—'}</td>
              <td>
                <When iso={deployment.updated_at} />
              </td>
            </tr>
          ))}
          {!page.loading && deployments.length === 0 && (
            <tr>
              <td colSpan={5}>No deployment yet.</td>
            </tr>
          )}
        </tbody>
      </table>
      <nav className="pager" aria-label="Pages">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}>
          Previous
        </button>
        <button type="button" disabled={deployments.length < PAGE_SIZE} onClick={() => setOffset(offset + PAGE_SIZE)}>
          Next
        </button>
      </nav>
    </main>
  );
}
