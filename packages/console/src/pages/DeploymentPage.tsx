/** One deployment: its fields, secrets by name, edit (PATCH), revisions with live status, the app's log, delete. */
import { useEffect, useState } from 'react';
import { controlPlane, IN_PROGRESS, type Deployment } from '../api/controlPlane';
import { ConfirmButton, ErrorText, LogView, Section, StatusBadge, When } from '../components/common';
import { useAsync } from '../hooks/useAsync';
import { useLiveRevision } from '../hooks/useLiveRevision';
import { useLogTail } from '../hooks/useLogTail';
import { Link, navigate } from '../router';
import { TEMPORAL_UI_URL } from '../settings';
import { DeploymentEdit } from './DeploymentEdit';

/** The Temporal UI's list of this deployment's workflows (search attribute GraphxDeploymentId). */
export function temporalLink(deploymentId: string): string | null {
  if (!TEMPORAL_UI_URL) return null;
  return `${TEMPORAL_UI_URL}/workflows?query=${encodeURIComponent(`GraphxDeploymentId="${deploymentId}"`)}`;
}

function Fields({ deployment }: { deployment: Deployment }) {
  const rows: Array<[string, string | null | undefined]> = [
    ['Id', deployment.id],
    ['Source', deployment.source],
    ['Repository', deployment.source_config.repo_url],
    ['Ref', deployment.source_revision_config.repo_ref],
    ['graphx.json', deployment.source_revision_config.graphx_config_path],
    ['Image', deployment.source_revision_config.image_uri],
    ['Install command', deployment.source_config.install_command],
    ['Build command', deployment.source_config.build_command],
    ['URL', deployment.url],
    ['Active revision', deployment.active_revision_id],
    ['Tracing project', deployment.tracing_project_id],
  ];
  return (
    <dl className="fields">
      {rows
        .filter(([, value]) => value)
        .map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd className="mono">{value}</dd>
          </div>
        ))}
      <div>
        <dt>Resource spec</dt>
        <dd className="mono">
          {deployment.source_config.resource_spec ? JSON.stringify(deployment.source_config.resource_spec) : '—'}
        </dd>
      </div>
      <div>
        <dt>Secrets</dt>
        <dd>
          {deployment.secrets.length === 0 ? (
            '—'
          ) : (
            <ul className="inline-list" aria-label="Secret names">
              {deployment.secrets.map((secret) => (
                <li key={secret.name} className="mono">
                  {secret.name}
                </li>
              ))}
            </ul>
          )}
        </dd>
      </div>
      <div>
        <dt>Updated</dt>
        <dd>
          <When iso={deployment.updated_at} />
        </dd>
      </div>
    </dl>
  );
}

function Revisions({ deployment, onChange }: { deployment: Deployment; onChange: () => void }) {
  const latest = useLiveRevision(deployment.id, deployment.latest_revision_id ?? '', 0);
  const list = useAsync(
    () => controlPlane.listRevisions(deployment.id),
    [deployment.id, latest.revision?.status, deployment.latest_revision_id],
  );
  const latestStatus = latest.revision?.status;
  useEffect(() => {
    if (latestStatus) onChange();
  }, [latestStatus, onChange]);
  return (
    <Section title="Revisions">
      <ErrorText error={list.error} />
      <table aria-label="Revisions">
        <thead>
          <tr>
            <th scope="col">Revision</th>
            <th scope="col">Status</th>
            <th scope="col">Ref / commit</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.resources ?? []).map((revision) => {
            const status = revision.id === latest.revision?.id ? latest.revision.status : revision.status;
            return (
              <tr key={revision.id}>
                <td>
                  <Link to={`/deployments/${deployment.id}/revisions/${revision.id}`} className="mono">
                    {revision.number ? `#${revision.number} ` : ''}
                    {revision.id.slice(0, 8)}
                  </Link>
                  {revision.id === deployment.active_revision_id && <span className="tag">active</span>}
                </td>
                <td>
                  <StatusBadge status={status} />
                  {IN_PROGRESS.includes(status) && <span className="visually-hidden"> in progress</span>}
                </td>
                <td className="mono">
                  {revision.source_revision_config.repo_ref ?? ''}{' '}
                  {revision.source_revision_config.repo_commit_sha?.slice(0, 7) ?? ''}
                </td>
                <td>
                  <When iso={revision.created_at} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </Section>
  );
}

export function DeploymentPage({ deploymentId }: { deploymentId: string }) {
  const deployment = useAsync(() => controlPlane.getDeployment(deploymentId), [deploymentId]);
  const [editing, setEditing] = useState(false);
  const appLog = useLogTail((offset) => controlPlane.appLogs(deploymentId, offset), deploymentId, true);
  if (deployment.error && !deployment.data) return <ErrorText error={deployment.error} />;
  const current = deployment.data;
  if (!current) return <p aria-busy="true">Loading…</p>;
  const temporal = temporalLink(current.id);
  return (
    <main>
      <div className="page-head">
        <h1>{current.name}</h1>
        <StatusBadge status={current.status} />
      </div>
      <nav className="actions" aria-label="Deployment actions">
        {current.active_revision_id && (
          <Link to={`/deployments/${current.id}/studio`} className="button">
            Open studio
          </Link>
        )}
        <button type="button" onClick={() => setEditing(!editing)} aria-expanded={editing}>
          Edit
        </button>
        {temporal && (
          <a href={temporal} target="_blank" rel="noreferrer noopener">
            Workflows in the Temporal UI
          </a>
        )}
        <ConfirmButton
          label="Delete"
          danger
          question={`Delete ${current.name}? Its app stops and its database is dropped.`}
          onConfirm={async () => {
            await controlPlane.deleteDeployment(current.id);
            navigate('/deployments');
          }}
        />
      </nav>
      {editing && (
        <DeploymentEdit
          deployment={current}
          onSaved={() => {
            setEditing(false);
            deployment.reload();
          }}
        />
      )}
      <Section title="Deployment">
        <Fields deployment={current} />
      </Section>
      <Revisions deployment={current} onChange={deployment.reload} />
      <Section title="App log">
        <ErrorText error={appLog.error} />
        <LogView lines={appLog.lines} label="App log" empty="No output from the app yet." />
      </Section>
    </main>
  );
}
