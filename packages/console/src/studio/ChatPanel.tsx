/**
 * Chat mode for graphs whose state has a `messages` list: the SDK's own React hook (`useStream`), as a chat app
 * would use it, on the studio's client. Message contents are tenant data, shown as text.
 */
import type { Client, Message } from '@langchain/langgraph-sdk';
import { useStream } from '@langchain/langgraph-sdk/react';
import { useState, type FormEvent } from 'react';
import { ErrorText } from '../components/common';

function textOf(message: Message): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => ('text' in part && typeof part.text === 'string' ? part.text : `[${part.type}]`)).join('');
}

export function ChatPanel(props: {
  client: Client;
  assistantId: string;
  threadId: string | null;
  onThreadId: (threadId: string) => void;
}) {
  const stream = useStream<{ messages: Message[] }>({
    client: props.client,
    assistantId: props.assistantId,
    threadId: props.threadId,
    onThreadId: props.onThreadId,
    messagesKey: 'messages',
  });
  const [text, setText] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!text.trim()) return;
    void stream.submit({ messages: [{ type: 'human', content: text }] }, { multitaskStrategy: 'enqueue', checkpoint: null });
    setText('');
  };
  return (
    <div className="chat">
      <ol className="messages" aria-label="Messages" aria-live="polite" tabIndex={0}>
        {stream.messages.map((message, index) => (
          <li key={message.id ?? index} className={`message message-${message.type}`}>
            <span className="message-role">{message.type === 'human' ? 'You' : message.type}</span>
            <span className="message-text">{textOf(message)}</span>
          </li>
        ))}
      </ol>
      <form className="inline-form" onSubmit={submit} aria-label="Send a message">
        <label htmlFor="chat-text" className="visually-hidden">
          Message
        </label>
        <input id="chat-text" value={text} placeholder="Message" onChange={(event) => setText(event.target.value)} />
        <button type="submit" disabled={stream.isLoading}>
          Send
        </button>
        {stream.isLoading && (
          <button type="button" className="secondary" onClick={() => void stream.stop()}>
            Stop
          </button>
        )}
      </form>
      <ErrorText error={stream.error ? String((stream.error as Error).message ?? stream.error) : null} />
    </div>
  );
}
