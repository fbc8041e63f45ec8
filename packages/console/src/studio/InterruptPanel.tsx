/**
 * A thread that waits: interrupts raised by nodes (`interrupt(value)`) or a breakpoint (interrupt before/after).
 * Resume with a value, or with a full `Command` ({resume, update, goto}); a breakpoint continues with no input.
 */
import type { Command, ThreadState } from '@langchain/langgraph-sdk';
import { useState, type FormEvent } from 'react';
import { ErrorText } from '../components/common';
import { parseJsonField, showJson } from './jsonText';

export function InterruptPanel(props: { state: ThreadState; busy: boolean; onResume: (command: Command | null) => void }) {
  const interrupts = props.state.tasks.flatMap((task) => task.interrupts.map((item) => ({ task: task.name, value: item.value })));
  const [resumeText, setResumeText] = useState('');
  const [asCommand, setAsCommand] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      if (asCommand) {
        const command = parseJsonField('Command', resumeText);
        if (!command || typeof command !== 'object' || Array.isArray(command)) throw new Error('A Command is a JSON object.');
        props.onResume(command as Command);
        return;
      }
      // A value that is not JSON is sent as the string typed.
      let resume: unknown = resumeText;
      try {
        resume = resumeText.trim() === '' ? null : JSON.parse(resumeText);
      } catch {
        resume = resumeText;
      }
      props.onResume({ resume });
    } catch (failure) {
      setError((failure as Error).message);
    }
  };
  return (
    <section className="card interrupt" aria-label="Interrupt">
      <h2>{interrupts.length > 0 ? 'The thread is waiting for input' : 'The thread is paused'}</h2>
      <p>Next: {props.state.next.join(', ')}</p>
      {interrupts.map((item, index) => (
        <div key={index}>
          <p className="hint">
            Interrupt from <span className="mono">{item.task}</span>:
          </p>
          <pre className="json" aria-label="Interrupt value" tabIndex={0}>
            {showJson(item.value)}
          </pre>
        </div>
      ))}
      {interrupts.length > 0 ? (
        <form className="form" onSubmit={submit} aria-label="Resume">
          <label className="inline">
            <input type="checkbox" checked={asCommand} onChange={(event) => setAsCommand(event.target.checked)} /> Send a Command
            (JSON with resume, update, goto)
          </label>
          <label htmlFor="resume-value">{asCommand ? 'Command (JSON)' : 'Resume value (JSON or text)'}</label>
          <textarea
            id="resume-value"
            rows={3}
            spellCheck={false}
            value={resumeText}
            onChange={(event) => setResumeText(event.target.value)}
          />
          <div className="actions">
            <button type="submit" disabled={props.busy}>
              Resume
            </button>
          </div>
          <ErrorText error={error} />
        </form>
      ) : (
        <div className="actions">
          <button type="button" disabled={props.busy} onClick={() => props.onResume(null)}>
            Continue
          </button>
        </div>
      )}
      {showJson(props.state.values) && <p className="hint">The state at this point is in the history below.</p>}
    </section>
  );
}
