/**
 * Errors with an HTTP status chosen by application code: `HTTPException` from `@langchain/langgraph-sdk/auth`
 * (matched by shape, since the app has its own copy) and the runtime's own 503. Answered as `{"detail": message}`
 * with the exception's headers; everything else goes on to the shared error middleware (src/http/errors.ts).
 */
import type Koa from 'koa';

export class HttpExceptionError extends Error {
  override name = 'HttpExceptionError';
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  /** Converts a thrown SDK `HTTPException` (anything with a numeric `status` and `headers`). */
  static from(error: unknown): HttpExceptionError | null {
    const candidate = error as { status?: unknown; headers?: unknown; message?: unknown } | null;
    if (!candidate || typeof candidate.status !== 'number' || candidate.status < 400 || candidate.status > 599) return null;
    if (candidate.headers === undefined) return null;
    const headers: Record<string, string> = {};
    new Headers(candidate.headers as ConstructorParameters<typeof Headers>[0]).forEach((value, key) => {
      headers[key] = value;
    });
    return new HttpExceptionError(candidate.status, String(candidate.message || 'Error'), headers);
  }
}

/** Answers HttpExceptionError (and SDK HTTPException thrown by authorization handlers) as `{"detail"}`. */
export function httpExceptionMiddleware(): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const exception = error instanceof HttpExceptionError ? error : HttpExceptionError.from(error);
      if (!exception) throw error;
      ctx.status = exception.status;
      ctx.set(exception.headers);
      ctx.body = { detail: exception.message };
    }
  };
}
