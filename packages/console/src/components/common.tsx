/** Small pieces every page uses. Everything shown is text: tenant data never becomes markup. */
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { FAILED, IN_PROGRESS, type LogLine } from '../api/controlPlane';

export function StatusBadge({ status }: { status: string }) {
  const tone =
    status === 'DEPLOYED' || status === 'READY' || status === 'success'
      ? 'ok'
      : FAILED.includes(status) || status.endsWith('FAILED') || status === 'error'
        ? 'bad'
        : IN_PROGRESS.includes(status) || status === 'running' || status === 'pending' || status === 'busy'
          ? 'busy'
          : 'idle';
  return <span className={`badge badge-${tone}`}>{status}</span>;
}

export function ErrorText({ error }: { error: Error | string | null | undefined }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {typeof error === 'string' ? error : error.message}
    </p>
  );
}

export function When({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span>—</span>;
  const date = new Date(iso);
  return <time dateTime={iso}>{date.toLocaleString()}</time>;
}

/**
 * A button that asks before it acts (delete, interrupt…): the first press shows the question and two buttons,
 * keyboard focus moves to the confirming one.
 */
export function ConfirmButton(props: {
  label: string;
  question: string;
  onConfirm: () => Promise<unknown> | void;
  danger?: boolean;
  disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
  }, [asking]);
  const confirm = async () => {
    setBusy(true);
    try {
      await props.onConfirm();
      setAsking(false);
      setError(null);
    } catch (failure) {
      setError(failure as Error);
    } finally {
      setBusy(false);
    }
  };
  if (!asking) {
    return (
      <span className="confirm">
        <button
          type="button"
          className={props.danger ? 'danger' : undefined}
          disabled={props.disabled}
          onClick={() => setAsking(true)}
        >
          {props.label}
        </button>
        <ErrorText error={error} />
      </span>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={props.question}>
      <span>{props.question}</span>
      <button
        ref={confirmRef}
        type="button"
        className={props.danger ? 'danger' : undefined}
        disabled={busy}
        onClick={() => void confirm()}
      >
        Yes, {props.label.toLowerCase()}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
      <ErrorText error={error} />
    </span>
  );
}

/** Log lines as text, scrolled to the end while the reader is at the end. */
export function LogView({ lines, label, empty }: { lines: LogLine[]; label: string; empty: string }) {
  const box = useRef<HTMLPreElement>(null);
  const atEnd = useRef(true);
  useEffect(() => {
    const element = box.current;
    if (element && atEnd.current) element.scrollTop = element.scrollHeight;
  }, [lines]);
  return (
    <pre
      ref={box}
      className="log"
      aria-label={label}
      tabIndex={0}
      onScroll={(event) => {
        const element = event.currentTarget;
        atEnd.current = element.scrollTop + element.clientHeight >= element.scrollHeight - 8;
      }}
    >
      {lines.length === 0
        ? empty
        : lines.map((line) => (
            <span key={line.id} className={`log-line log-${line.level}`}>
              {line.timestamp.slice(11, 19)} {line.message}
              {'\n'}
            </span>
          ))}
    </pre>
  );
}

export function Section({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="card">
      <header className="card-head">
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

/** Copies text the user may want elsewhere (a URL, an id). */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="small"
      aria-label={label}
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(() => setCopied(true));
      }}
    >
      {copied ? 'Copied' : 'Copy'}
    </button>
  );
}
