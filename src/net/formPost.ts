/**
 * One form POST over node's http/https with a caller-supplied `lookup` (see outboundPolicy.guardedLookup): the
 * global `fetch` cannot take one without importing undici's own Agent. Redirects are never followed (a 3xx is just
 * the answer), the answer is cut at `maxChars`, and the whole exchange is bounded by `timeoutMs`.
 */
import http from 'node:http';
import https from 'node:https';
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
  const transport = target.protocol === 'https:' ? https : http;
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
        response.on('data', (chunk: string) => {
          text += chunk;
          // Enough to read a token response; a longer answer is not one, and is not worth holding.
          if (text.length > options.maxChars) response.destroy();
        });
        const finish = () =>
          resolve({
            status: response.statusCode ?? 0,
            contentType: String(response.headers['content-type'] ?? ''),
            text: text.slice(0, options.maxChars),
          });
        response.on('end', finish);
        response.on('close', finish);
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}
