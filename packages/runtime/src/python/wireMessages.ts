/**
 * A Python graph's messages arrive as the dicts the wire shows (`model_dump()`). The legacy `messages` stream mode
 * (graphStream.ts) accumulates token chunks and finds complete messages by shape (`toDict`, `getType`, `concat`),
 * so messages where it looks (a `messages` chunk, a values chunk's `messages`) are wrapped in WireMessage, which
 * serialises back to the same dict.
 */
type Dict = Record<string, any>;

const MESSAGE_TYPES = new Set(['human', 'ai', 'system', 'tool', 'function', 'chat', 'remove', 'developer']);

function isMessageDict(value: unknown): value is Dict {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const type = (value as Dict).type;
  return typeof type === 'string' && 'content' in value && (MESSAGE_TYPES.has(type) || type.endsWith('MessageChunk'));
}

function concatContent(left: unknown, right: unknown): unknown {
  if (typeof left === 'string' && typeof right === 'string') return left + right;
  const asList = (value: unknown) =>
    Array.isArray(value) ? value : value === '' || value == null ? [] : [{ type: 'text', text: value }];
  return [...asList(left), ...asList(right)];
}

/** Tool-call chunks of the same `index` are one call whose `args` arrive in pieces (as LangChain merges them). */
function concatToolCallChunks(left: Dict[] = [], right: Dict[] = []): Dict[] {
  const merged = left.map((chunk) => ({ ...chunk }));
  for (const chunk of right) {
    const same = chunk.index != null ? merged.find((existing) => existing.index === chunk.index) : undefined;
    if (!same) {
      merged.push({ ...chunk });
      continue;
    }
    same.args = `${same.args ?? ''}${chunk.args ?? ''}`;
    same.name = same.name ?? chunk.name;
    same.id = same.id ?? chunk.id;
  }
  return merged;
}

export class WireMessage {
  constructor(readonly dict: Dict) {}

  get id(): string | undefined {
    return this.dict.id ?? undefined;
  }

  getType(): string {
    return String(this.dict.type);
  }

  toDict(): { type: string; data: Dict } {
    return { type: this.getType(), data: this.dict };
  }

  /** Only chunks (`AIMessageChunk`, …) are partial: the legacy mode accumulates those alone. */
  get concat(): ((other: unknown) => WireMessage) | undefined {
    if (!this.getType().endsWith('MessageChunk')) return undefined;
    return (other: unknown) => {
      const next = other instanceof WireMessage ? other.dict : (other as Dict);
      return new WireMessage({
        ...this.dict,
        content: concatContent(this.dict.content, next.content),
        additional_kwargs: { ...this.dict.additional_kwargs, ...next.additional_kwargs },
        response_metadata: { ...this.dict.response_metadata, ...next.response_metadata },
        tool_call_chunks: concatToolCallChunks(this.dict.tool_call_chunks, next.tool_call_chunks),
        usage_metadata: next.usage_metadata ?? this.dict.usage_metadata ?? null,
      });
    };
  }
}

/** A `messages` chunk `[message, metadata]` with its message wrapped. */
export function wrapMessageChunk(chunk: unknown): unknown {
  if (!Array.isArray(chunk) || !isMessageDict(chunk[0])) return chunk;
  return [new WireMessage(chunk[0]), chunk[1]];
}

/** A values chunk with its `messages` (or itself, a list of messages) wrapped. */
export function wrapValuesMessages(values: unknown): unknown {
  const wrap = (list: unknown[]) => list.map((item) => (isMessageDict(item) ? new WireMessage(item) : item));
  if (Array.isArray(values)) return wrap(values);
  if (values && typeof values === 'object' && Array.isArray((values as Dict).messages)) {
    return { ...(values as Dict), messages: wrap((values as Dict).messages) };
  }
  return values;
}
