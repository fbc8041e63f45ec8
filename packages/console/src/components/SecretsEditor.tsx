/**
 * Secrets as name/value rows. Values are typed once and never shown again: a stored secret is listed by name, and
 * kept as it is unless a new value is typed (the API keeps a value sent back as `********`).
 */
export const MASKED = '********';

export interface SecretRow {
  name: string;
  value: string;
  /** True for a secret the deployment already has: an empty value keeps the stored one. */
  stored: boolean;
}

export function secretsForRequest(rows: SecretRow[]): Array<{ name: string; value: string }> {
  return rows
    .filter((row) => row.name.trim() !== '')
    .map((row) => ({ name: row.name.trim(), value: row.stored && row.value === '' ? MASKED : row.value }));
}

export function SecretsEditor({ rows, onChange }: { rows: SecretRow[]; onChange: (rows: SecretRow[]) => void }) {
  const update = (index: number, change: Partial<SecretRow>) =>
    onChange(rows.map((row, at) => (at === index ? { ...row, ...change } : row)));
  return (
    <fieldset>
      <legend>Secrets</legend>
      {rows.length === 0 && <p className="hint">No secret. Secrets reach the app as environment variables.</p>}
      {rows.map((row, index) => (
        <div className="secret-row" key={index}>
          <label htmlFor={`secret-name-${index}`}>Name</label>
          <input
            id={`secret-name-${index}`}
            value={row.name}
            readOnly={row.stored}
            pattern="[A-Za-z_][A-Za-z0-9_]*"
            title="An environment variable name: letters, digits and _, not starting with a digit"
            onChange={(event) => update(index, { name: event.target.value })}
          />
          <label htmlFor={`secret-value-${index}`}>{row.stored ? 'New value (empty keeps it)' : 'Value'}</label>
          <input
            id={`secret-value-${index}`}
            type="password"
            autoComplete="off"
            value={row.value}
            onChange={(event) => update(index, { value: event.target.value })}
          />
          <button type="button" className="small" onClick={() => onChange(rows.filter((_, at) => at !== index))}>
            Remove {row.name || 'secret'}
          </button>
        </div>
      ))}
      <button type="button" className="small" onClick={() => onChange([...rows, { name: '', value: '', stored: false }])}>
        Add secret
      </button>
    </fieldset>
  );
}
