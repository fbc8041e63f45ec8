/**
 * `PATCH /v2/deployments/{id}`: only what changed is sent, so an unchanged form makes no new revision. Secrets are
 * listed by name; a stored one is kept unless a new value is typed.
 */
import { useState, type FormEvent } from 'react';
import { controlPlane, type Deployment } from '../api/controlPlane';
import { ErrorText, Section } from '../components/common';
import { SecretsEditor, secretsForRequest, type SecretRow } from '../components/SecretsEditor';
import { parseResourceSpec } from './DeploymentCreate';

export function DeploymentEdit({ deployment, onSaved }: { deployment: Deployment; onSaved: () => void }) {
  const isImage = deployment.source !== 'codehost';
  const [repoRef, setRepoRef] = useState(deployment.source_revision_config.repo_ref ?? '');
  const [configPath, setConfigPath] = useState(deployment.source_revision_config.graphx_config_path ?? '');
  const [imageUri, setImageUri] = useState(deployment.source_revision_config.image_uri ?? '');
  const [installCommand, setInstallCommand] = useState(deployment.source_config.install_command ?? '');
  const [buildCommand, setBuildCommand] = useState(deployment.source_config.build_command ?? '');
  const initialSpec = deployment.source_config.resource_spec
    ? JSON.stringify(deployment.source_config.resource_spec, null, 2)
    : '';
  const [resourceSpec, setResourceSpec] = useState(initialSpec);
  const [secrets, setSecrets] = useState<SecretRow[]>(
    deployment.secrets.map((secret) => ({ name: secret.name, value: '', stored: true })),
  );
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      const body: Record<string, any> = {};
      const revisionConfig: Record<string, string> = {};
      if (!isImage && repoRef !== (deployment.source_revision_config.repo_ref ?? '')) revisionConfig.repo_ref = repoRef;
      if (!isImage && configPath !== (deployment.source_revision_config.graphx_config_path ?? ''))
        revisionConfig.graphx_config_path = configPath;
      if (isImage && imageUri !== (deployment.source_revision_config.image_uri ?? '')) revisionConfig.image_uri = imageUri;
      if (Object.keys(revisionConfig).length > 0) body.source_revision_config = revisionConfig;
      const sourceConfig: Record<string, unknown> = {};
      if (installCommand !== (deployment.source_config.install_command ?? ''))
        sourceConfig.install_command = installCommand || null;
      if (buildCommand !== (deployment.source_config.build_command ?? '')) sourceConfig.build_command = buildCommand || null;
      if (resourceSpec !== initialSpec) sourceConfig.resource_spec = parseResourceSpec(resourceSpec) ?? null;
      if (Object.keys(sourceConfig).length > 0) body.source_config = sourceConfig;
      const secretsChanged =
        secrets.length !== deployment.secrets.length || secrets.some((row) => !row.stored || row.value !== '');
      if (secretsChanged) body.secrets = secretsForRequest(secrets);
      if (Object.keys(body).length === 0) {
        setError('Nothing changed.');
        return;
      }
      setBusy(true);
      await controlPlane.patchDeployment(deployment.id, body);
      onSaved();
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Section title="Edit deployment">
      <form className="form" onSubmit={(event) => void submit(event)} aria-label="Edit deployment">
        <p className="hint">A new revision is built when the ref, commands, resources or secrets change.</p>
        {isImage ? (
          <>
            <label htmlFor="edit-image-uri">Image URI</label>
            <input id="edit-image-uri" value={imageUri} onChange={(event) => setImageUri(event.target.value)} />
          </>
        ) : (
          <>
            <label htmlFor="edit-repo-ref">Branch, tag or commit</label>
            <input id="edit-repo-ref" value={repoRef} onChange={(event) => setRepoRef(event.target.value)} />
            <label htmlFor="edit-config-path">Path of graphx.json</label>
            <input id="edit-config-path" value={configPath} onChange={(event) => setConfigPath(event.target.value)} />
            <label htmlFor="edit-install-command">Install command</label>
            <input id="edit-install-command" value={installCommand} onChange={(event) => setInstallCommand(event.target.value)} />
            <label htmlFor="edit-build-command">Build command</label>
            <input id="edit-build-command" value={buildCommand} onChange={(event) => setBuildCommand(event.target.value)} />
          </>
        )}
        <label htmlFor="edit-resource-spec">resource_spec (JSON)</label>
        <textarea
          id="edit-resource-spec"
          rows={3}
          spellCheck={false}
          value={resourceSpec}
          onChange={(event) => setResourceSpec(event.target.value)}
        />
        <SecretsEditor rows={secrets} onChange={setSecrets} />
        <div className="actions">
          <button type="submit" disabled={busy}>
            Save changes
          </button>
        </div>
        <ErrorText error={error} />
      </form>
    </Section>
  );
}
