/** The form of `POST /v2/deployments`: the same fields, the API's own validation messages shown as they come. */
import { useState, type FormEvent } from 'react';
import { controlPlane } from '../api/controlPlane';
import { ErrorText } from '../components/common';
import { SecretsEditor, secretsForRequest, type SecretRow } from '../components/SecretsEditor';
import { navigate } from '../router';

const SOURCES = [
  { value: 'codehost', label: 'Git repository (codehost)' },
  { value: 'internal_docker', label: 'Image (internal_docker)' },
  { value: 'external_docker', label: 'Image from an external registry (external_docker)' },
];

/** Parses the optional resource_spec JSON; throws a sentence for the form. */
export function parseResourceSpec(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('resource_spec is not valid JSON.');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('resource_spec must be a JSON object.');
  return parsed as Record<string, unknown>;
}

export function DeploymentCreate() {
  const [name, setName] = useState('');
  const [source, setSource] = useState('codehost');
  const [repoUrl, setRepoUrl] = useState('');
  const [repoRef, setRepoRef] = useState('main');
  const [configPath, setConfigPath] = useState('graphx.json');
  const [imageUri, setImageUri] = useState('');
  const [installCommand, setInstallCommand] = useState('');
  const [buildCommand, setBuildCommand] = useState('');
  const [resourceSpec, setResourceSpec] = useState('');
  const [secrets, setSecrets] = useState<SecretRow[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const isImage = source !== 'codehost';

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const spec = parseResourceSpec(resourceSpec);
      const body = {
        name: name.trim(),
        source,
        source_config: isImage
          ? { ...(spec ? { resource_spec: spec } : {}) }
          : {
              repo_url: repoUrl.trim(),
              ...(installCommand.trim() ? { install_command: installCommand } : {}),
              ...(buildCommand.trim() ? { build_command: buildCommand } : {}),
              ...(spec ? { resource_spec: spec } : {}),
            },
        source_revision_config: isImage
          ? { image_uri: imageUri.trim() }
          : { repo_ref: repoRef.trim() || 'main', graphx_config_path: configPath.trim() || 'graphx.json' },
        secrets: secretsForRequest(secrets),
      };
      const created = await controlPlane.createDeployment(body);
      navigate(`/deployments/${created.id}`);
    } catch (failure) {
      setError((failure as Error).message);
      setBusy(false);
    }
  };

  return (
    <main>
      <h1>New deployment</h1>
      <form className="form" onSubmit={(event) => void submit(event)} aria-label="New deployment">
        <label htmlFor="name">Name</label>
        <input
          id="name"
          required
          pattern="[a-z][a-z0-9\-]{0,62}"
          title="Lowercase letters, digits and -, starting with a letter"
          aria-describedby="name-hint"
          value={name}
          onChange={(event) => setName(event.target.value)}
        />
        <p id="name-hint" className="hint">
          Lowercase letters, digits and -, starting with a letter; it names the app&apos;s URL.
        </p>
        <label htmlFor="source">Source</label>
        <select id="source" value={source} onChange={(event) => setSource(event.target.value)}>
          {SOURCES.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
        {isImage ? (
          <>
            <label htmlFor="image-uri">Image URI</label>
            <input id="image-uri" required value={imageUri} onChange={(event) => setImageUri(event.target.value)} />
          </>
        ) : (
          <>
            <label htmlFor="repo-url">Repository URL</label>
            <input id="repo-url" required value={repoUrl} onChange={(event) => setRepoUrl(event.target.value)} />
            <label htmlFor="repo-ref">Branch, tag or commit</label>
            <input id="repo-ref" value={repoRef} onChange={(event) => setRepoRef(event.target.value)} />
            <label htmlFor="config-path">Path of graphx.json</label>
            <input id="config-path" value={configPath} onChange={(event) => setConfigPath(event.target.value)} />
            <label htmlFor="install-command">Install command (optional)</label>
            <input id="install-command" value={installCommand} onChange={(event) => setInstallCommand(event.target.value)} />
            <label htmlFor="build-command">Build command (optional)</label>
            <input id="build-command" value={buildCommand} onChange={(event) => setBuildCommand(event.target.value)} />
          </>
        )}
        <label htmlFor="resource-spec">resource_spec (JSON, optional)</label>
        <textarea
          id="resource-spec"
          rows={3}
          spellCheck={false}
          placeholder='{"min_scale": 1}'
          value={resourceSpec}
          onChange={(event) => setResourceSpec(event.target.value)}
        />
        <SecretsEditor rows={secrets} onChange={setSecrets} />
        <div className="actions">
          <button type="submit" disabled={busy}>
            Create deployment
          </button>
        </div>
        <ErrorText error={error} />
      </form>
    </main>
  );
}
