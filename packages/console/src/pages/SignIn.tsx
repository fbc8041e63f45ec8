/** Nothing of the console shows before a key the control plane accepts is given. */
import { useState, type FormEvent } from 'react';
import { ApiError } from '../api/controlPlane';
import { ErrorText } from '../components/common';
import { signIn } from '../session';

export function SignIn({ notice }: { notice?: string }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const response = await fetch('/v2/deployments?limit=1', { headers: { 'X-Api-Key': key.trim() } });
      if (response.status === 401) throw new ApiError(401, 'The control plane refused this API key.');
      if (!response.ok) throw new ApiError(response.status, `The control plane answered ${response.status}.`);
      signIn(key.trim());
    } catch (failure) {
      setError(failure instanceof ApiError ? failure.message : 'The control plane could not be reached.');
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="signin">
      <h1>graphx console</h1>
      <form onSubmit={(event) => void submit(event)} aria-label="Sign in">
        <p>Sign in with an API key of your organization. It is kept in this tab only, until the tab closes.</p>
        {notice && <p className="notice">{notice}</p>}
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          required
          autoFocus
          value={key}
          onChange={(event) => setKey(event.target.value)}
        />
        <button type="submit" disabled={busy || key.trim() === ''}>
          Sign in
        </button>
        <ErrorText error={error} />
      </form>
    </main>
  );
}
