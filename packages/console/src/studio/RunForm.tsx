/**
 * The run form: one field per top-level property of the graph's input schema (text, number, checkbox; JSON for the
 * rest), or the raw input as JSON when the schema says little; config, context, and where to pause (interrupt
 * before / after a node).
 */
import { useMemo, useState, type FormEvent } from 'react';
import { ErrorText } from '../components/common';
import { parseJsonField } from './jsonText';

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  description?: string;
  enum?: unknown[];
}

export interface RunFormValues {
  input: Record<string, unknown> | null;
  config?: Record<string, unknown>;
  context?: unknown;
  interruptBefore: string[];
  interruptAfter: string[];
}

type FieldKind = 'string' | 'number' | 'boolean' | 'json';

function kindOf(schema: JsonSchema): FieldKind {
  const type = Array.isArray(schema.type) ? schema.type.find((item) => item !== 'null') : schema.type;
  if (type === 'string') return 'string';
  if (type === 'number' || type === 'integer') return 'number';
  if (type === 'boolean') return 'boolean';
  return 'json';
}

/** The form's fields from an input schema; null when the schema has no properties (the JSON editor is used). */
export function fieldsOf(
  schema: unknown,
): Array<{ name: string; kind: FieldKind; required: boolean; description?: string }> | null {
  const properties = (schema as JsonSchema | null)?.properties;
  if (!properties || Object.keys(properties).length === 0) return null;
  const required = new Set((schema as JsonSchema).required ?? []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    kind: kindOf(property ?? {}),
    required: required.has(name),
    description: property?.description,
  }));
}

export function RunForm(props: {
  inputSchema: unknown;
  nodes: string[];
  busy: boolean;
  submitLabel: string;
  onSubmit: (values: RunFormValues) => void;
}) {
  const fields = useMemo(() => fieldsOf(props.inputSchema), [props.inputSchema]);
  const [useJson, setUseJson] = useState(fields === null);
  const [fieldValues, setFieldValues] = useState<Record<string, string | boolean>>({});
  const [inputJson, setInputJson] = useState('{}');
  const [configJson, setConfigJson] = useState('');
  const [contextJson, setContextJson] = useState('');
  const [before, setBefore] = useState<string[]>([]);
  const [after, setAfter] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);

  const inputFromFields = (): Record<string, unknown> => {
    const input: Record<string, unknown> = {};
    for (const field of fields ?? []) {
      const raw = fieldValues[field.name];
      if (raw === undefined || raw === '') continue;
      if (field.kind === 'boolean') input[field.name] = raw === true;
      else if (field.kind === 'number') input[field.name] = Number(raw);
      else if (field.kind === 'json') input[field.name] = parseJsonField(field.name, String(raw));
      else input[field.name] = raw;
    }
    return input;
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      const input = useJson ? (parseJsonField('Input', inputJson, null) as Record<string, unknown> | null) : inputFromFields();
      const config = parseJsonField('Config', configJson) as Record<string, unknown> | undefined;
      const context = parseJsonField('Context', contextJson);
      props.onSubmit({ input, config, context, interruptBefore: before, interruptAfter: after });
    } catch (failure) {
      setError((failure as Error).message);
    }
  };

  const toggle = (list: string[], setList: (next: string[]) => void, node: string) =>
    setList(list.includes(node) ? list.filter((item) => item !== node) : [...list, node]);

  return (
    <form className="form run-form" onSubmit={submit} aria-label="Run">
      {fields && (
        <label className="inline">
          <input type="checkbox" checked={useJson} onChange={(event) => setUseJson(event.target.checked)} /> Edit the input as
          JSON
        </label>
      )}
      {useJson || !fields ? (
        <>
          <label htmlFor="run-input-json">Input (JSON)</label>
          <textarea
            id="run-input-json"
            rows={5}
            spellCheck={false}
            value={inputJson}
            onChange={(event) => setInputJson(event.target.value)}
          />
        </>
      ) : (
        <fieldset>
          <legend>Input</legend>
          {fields.map((field) => {
            const id = `run-input-${field.name}`;
            const value = fieldValues[field.name];
            const set = (next: string | boolean) => setFieldValues((kept) => ({ ...kept, [field.name]: next }));
            if (field.kind === 'boolean') {
              return (
                <label key={field.name} className="inline" htmlFor={id}>
                  <input id={id} type="checkbox" checked={value === true} onChange={(event) => set(event.target.checked)} />{' '}
                  {field.name}
                </label>
              );
            }
            return (
              <div key={field.name}>
                <label htmlFor={id}>
                  {field.name}
                  {field.kind === 'json' ? ' (JSON)' : ''}
                  {field.required ? ' (required)' : ''}
                </label>
                {field.kind === 'json' ? (
                  <textarea
                    id={id}
                    rows={2}
                    spellCheck={false}
                    value={String(value ?? '')}
                    onChange={(event) => set(event.target.value)}
                  />
                ) : (
                  <input
                    id={id}
                    type={field.kind === 'number' ? 'number' : 'text'}
                    step="any"
                    required={field.required}
                    value={String(value ?? '')}
                    onChange={(event) => set(event.target.value)}
                  />
                )}
                {field.description && <p className="hint">{field.description}</p>}
              </div>
            );
          })}
        </fieldset>
      )}
      <details>
        <summary>Config, context and breakpoints</summary>
        <label htmlFor="run-config">Config (JSON, e.g. {'{"configurable": {…}}'})</label>
        <textarea
          id="run-config"
          rows={3}
          spellCheck={false}
          value={configJson}
          onChange={(event) => setConfigJson(event.target.value)}
        />
        <label htmlFor="run-context">Context (JSON)</label>
        <textarea
          id="run-context"
          rows={2}
          spellCheck={false}
          value={contextJson}
          onChange={(event) => setContextJson(event.target.value)}
        />
        <fieldset>
          <legend>Interrupt before</legend>
          {props.nodes.map((node) => (
            <label key={node} className="inline">
              <input type="checkbox" checked={before.includes(node)} onChange={() => toggle(before, setBefore, node)} /> {node}
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Interrupt after</legend>
          {props.nodes.map((node) => (
            <label key={node} className="inline">
              <input type="checkbox" checked={after.includes(node)} onChange={() => toggle(after, setAfter, node)} /> {node}
            </label>
          ))}
        </fieldset>
      </details>
      <div className="actions">
        <button type="submit" disabled={props.busy}>
          {props.submitLabel}
        </button>
      </div>
      <ErrorText error={error} />
    </form>
  );
}
