import { formatDuration, formatTime, prettyJson } from './format';
import { visibleStreams, type LiveState, type LiveTool } from './live-state';
import type { ContentPart, Message, StoredMessage, ToolCall } from './types';

/** The session's messages from history, then what is streaming or running right now. */
export function Conversation({ messages, live }: { messages: StoredMessage[]; live: LiveState }) {
  const persisted = new Set(messages.map((m) => m.seq));
  const results = new Map<string, StoredMessage>();
  const calledIds = new Set<string>();
  for (const stored of messages) {
    if (stored.message.role === 'tool' && stored.message.toolCallId !== undefined) results.set(stored.message.toolCallId, stored);
    for (const call of stored.message.toolCalls ?? []) calledIds.add(call.id);
  }
  const streams = visibleStreams(live, (seq) => persisted.has(seq));
  const running = [...live.tools.values()].filter((tool) => !calledIds.has(tool.toolCallId));
  return (
    <div className="conversation" data-testid="conversation">
      {messages.map((stored) => {
        const { message } = stored;
        if (message.role === 'tool' && message.toolCallId !== undefined && calledIds.has(message.toolCallId)) return null;
        return <MessageView key={stored.seq} stored={stored} results={results} live={live} />;
      })}
      {running.map((tool) => (
        <LiveToolView key={tool.toolCallId} tool={tool} />
      ))}
      {streams.map((stream) => (
        <div key={stream.streamId} className="message assistant streaming" data-testid="streaming-message" data-input-seq={stream.inputSeq ?? ''}>
          <div className="meta">assistant · streaming{stream.completed ? ' · complete' : '…'}</div>
          {stream.think !== '' && <pre className="think">{stream.think}</pre>}
          <div className="text" data-testid="streaming-text">
            {stream.text}
          </div>
        </div>
      ))}
    </div>
  );
}

function MessageView({ stored, results, live }: { stored: StoredMessage; results: Map<string, StoredMessage>; live: LiveState }) {
  const { message } = stored;
  const text = textOf(message);
  return (
    <div
      className={`message ${message.role} kind-${stored.kind}${stored.state === 'compacted' ? ' compacted' : ''}`}
      data-testid="message"
      data-role={message.role}
      data-seq={stored.seq}
      data-input-seq={stored.inputSeq ?? ''}
    >
      <div className="meta">
        {message.role}
        {stored.kind !== 'message' ? ` · ${stored.kind}` : ''} · #{stored.seq}
        {stored.inputSeq !== null ? ` · input ${stored.inputSeq}` : ''}
        {stored.round !== null ? ` · round ${stored.round}` : ''} · {formatTime(stored.createdAt)}
      </div>
      {text !== '' && (
        <div className="text" data-testid="message-text">
          {text}
        </div>
      )}
      {(message.toolCalls ?? []).map((call) => (
        <ToolCallView key={call.id} call={call} result={results.get(call.id)} live={live.tools.get(call.id)} />
      ))}
      {message.role === 'tool' && <div className="muted small">result of {message.name ?? message.toolCallId}</div>}
    </div>
  );
}

function ToolCallView({ call, result, live }: { call: ToolCall; result: StoredMessage | undefined; live: LiveTool | undefined }) {
  const failed = result?.message.isError === true || live?.status === 'failed';
  const output = result !== undefined ? textOf(result.message) : (live?.output ?? null);
  const state = output !== null ? (failed ? 'failed' : 'done') : 'running';
  return (
    <details className={`tool ${state}`} data-testid="tool-call" data-tool={call.name} data-state={state} open={state === 'running'}>
      <summary>
        <span className="tool-name">{call.name}</span> <span className="muted small">{state}</span>{' '}
        {live?.durationMs !== null && live?.durationMs !== undefined && <span className="muted small">{formatDuration(live.durationMs)}</span>}
      </summary>
      <div className="small muted">arguments</div>
      <pre data-testid="tool-args">{prettyJson(call.arguments)}</pre>
      {output !== null && (
        <>
          <div className="small muted">{failed ? 'error' : 'result'}</div>
          <pre data-testid="tool-result">{prettyJson(output)}</pre>
        </>
      )}
    </details>
  );
}

function LiveToolView({ tool }: { tool: LiveTool }) {
  return (
    <details className={`tool ${tool.status}`} data-testid="tool-call" data-tool={tool.name} data-state={tool.status} open>
      <summary>
        <span className="tool-name">{tool.name}</span> <span className="muted small">{tool.status}</span>{' '}
        <span className="muted small">{formatDuration(tool.durationMs)}</span>
      </summary>
      <pre data-testid="tool-args">{prettyJson(tool.input)}</pre>
      {tool.output !== null && <pre data-testid="tool-result">{prettyJson(tool.output)}</pre>}
    </details>
  );
}

function textOf(message: Message): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part: ContentPart) => (part.type === 'text' ? (part.text ?? '') : `[${part.type}${part.url !== undefined ? ` ${part.url}` : ''}]`)).join('');
}
