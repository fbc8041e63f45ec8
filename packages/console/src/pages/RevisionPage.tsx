/** One revision: live status (long poll), its build and rollout log streaming while it runs, retry / interrupt / redeploy. */
import { useState } from 'react';
import { controlPlane, FAILED, IN_PROGRESS, type Deployment } from '../api/controlPlane';
import { ConfirmButton, ErrorText, LogView, Section, StatusBadge, When } from '../components/common';
import { useLiveRevision } from '../hooks/useLiveRevision';
import { useLogTail } from '../hooks/useLogTail';
import { Link, navigate } from '../router';
import { temporalLink } from './DeploymentPage';

export function RevisionPage({ deploymentId, revisionId }: { deploymentId: string; revisionId: string }) {
  const [generation, setGeneration] = useState(0);
  const { revision, error } = useLiveRevision(deploymentId, revisionId, generation);
  const running = revision ? IN_PROGRESS.includes(revision.status) : true;
  const log = useLogTail((offset) => controlPlane.revisionLogs(deploymentId, revisionId, offset), revisionId, running);
  const [notice, setNotice] = useState<string | null>(null);
  const temporal = temporalLink(deploymentId);
  if (!revision) return error ? <ErrorText error={error} /> : <p aria-busy="true">Loading…</p>;
  const failed = FAILED.includes(revision.status);
  return (
    <main>
      <p>
        <Link to={`/deployments/${deploymentId}`}>← Deployment</Link>
      </p>
      <div className="page-head">
        <h1>
          Revision{' '}
          <span className="mono">
            {revision.number ? `#${revision.number} ` : ''}
            {revision.id.slice(0, 8)}
          </span>
        </h1>
        <span aria-live="polite" aria-label="Revision status">
          <StatusBadge status={revision.status} />
        </span>
      </div>
      {revision.status_message && (
        <p className={failed ? 'error' : 'notice'} aria-label="Status message">
          {revision.status_message}
        </p>
      )}
      <nav className="actions" aria-label="Revision actions">
        {failed && (
          <button
            type="button"
            onClick={() => {
              void controlPlane.revisionAction(deploymentId, revision.id, 'retry').then(
                () => {
                  setNotice('Retry sent: the revision runs again from the step that failed.');
                  setGeneration((value) => value + 1);
                },
                (failure: Error) => setNotice(failure.message),
              );
            }}
          >
            Retry
          </button>
        )}
        {IN_PROGRESS.includes(revision.status) && (
          <ConfirmButton
            label="Interrupt"
            question="Stop this revision? It becomes INTERRUPTED; the active revision keeps serving."
            onConfirm={() => controlPlane.revisionAction(deploymentId, revision.id, 'interrupt')}
          />
        )}
        <ConfirmButton
          label="Redeploy"
          question="Deploy this revision's configuration again, as a new revision?"
          onConfirm={async () => {
            const deployment = (await controlPlane.revisionAction(deploymentId, revision.id, 'redeploy')) as Deployment;
            if (deployment.latest_revision_id)
              navigate(`/deployments/${deploymentId}/revisions/${deployment.latest_revision_id}`);
          }}
        />
        {temporal && (
          <a href={temporal} target="_blank" rel="noreferrer noopener">
            Workflows in the Temporal UI
          </a>
        )}
      </nav>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <Section title="Revision">
        <dl className="fields">
          <div>
            <dt>Ref</dt>
            <dd className="mono">{revision.source_revision_config.repo_ref ?? '—'}</dd>
          </div>
          <div>
            <dt>Commit</dt>
            <dd className="mono">{revision.source_revision_config.repo_commit_sha ?? '—'}</dd>
          </div>
          {revision.source_revision_config.image_ref && (
            <div>
              <dt>Image</dt>
              <dd className="mono">{revision.source_revision_config.image_ref}</dd>
            </div>
          )}
          <div>
            <dt>Created</dt>
            <dd>
              <When iso={revision.created_at} />
            </dd>
          </div>
          <div>
            <dt>Updated</dt>
            <dd>
              <When iso={revision.updated_at} />
            </dd>
          </div>
        </dl>
      </Section>
      <Section title="Build log">
        <ErrorText error={log.error} />
        <LogView lines={log.lines} label="Build log" empty={running ? 'Waiting for the first lines…' : 'No log lines.'} />
      </Section>
    </main>
  );
}
