/**
 * One form POST over node's http/https with a caller-supplied `lookup` (see outboundPolicy.guardedLookup): the
 * global `fetch` cannot take one without importing undici's own Agent. Redirects are never followed (a 3xx is just
 * the answer), the answer is cut at `maxChars`, and the whole exchange is bounded by `timeoutMs`.
 */
import http from 'node:http';
import type https from 'node:https';
import type net from 'node:net';

export interface FormPostAnswer {
  status: number;
  contentType: string;
  text: string;
}

export function postForm(
  url: string,
  options: { headers: Record<string, string>; body: string; timeoutMs: number; maxChars: number; lookup?: net.LookupFunction },
): Promise<FormPostAnswer> {
  const target = new URL(url);
  // https (tls, OpenSSL's setup: ~6 MB resident) is required by the first https post, not by every server at start.
  const transport = target.protocol === 'https:' ? (require('node:https') as typeof https) : http;
  return new Promise((resolve, reject) => {
    const request = transport.request(
      target,
      {
        method: 'POST',
        headers: { ...options.headers, 'content-length': Buffer.byteLength(options.body) },
        signal: AbortSignal.timeout(options.timeoutMs),
        ...(options.lookup ? { lookup: options.lookup } : {}),
      },
      (response) => {
        response.setEncoding('utf8');
        let text = '';
        let truncated = false;
        response.on('data', (chunk: string) => {
          text += chunk;
          // Enough to read a token response; a longer answer is not one, and is not worth holding.
          if (text.length > options.maxChars) {
            truncated = true;
            response.destroy();
          }
        });
        const answer = () => ({
          status: response.statusCode ?? 0,
          contentType: String(response.headers['content-type'] ?? ''),
          text: text.slice(0, options.maxChars),
        });
        response.on('end', () => resolve(answer()));
        // Closed without an end: cut short by us (too long: still an answer) or by the peer or the timeout (an error).
        response.on('close', () => {
          if (truncated) resolve(answer());
          else if (!response.complete) reject(Object.assign(new Error('the response was cut short'), { code: 'ECONNRESET' }));
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}
