/**
 * Test helper: one HTTP/1.1 request written byte for byte on a socket, so no client
 * normalises the path, the request line or the header bytes before the server sees them.
 */
import { connect } from 'node:net';

export interface RawResponse {
  readonly status: number;
  readonly head: string;
  readonly body: string;
}

/**
 * Sends `head` (request line and headers, CRLF-separated, without the blank line) and `body`
 * to 127.0.0.1:`port` with `Connection: close`, and reads the whole answer.
 */
export function rawRequest(
  port: number,
  head: string | Buffer,
  body: string | Buffer = '',
): Promise<RawResponse> {
  const payload = Buffer.from(body);
  const request = Buffer.concat([
    Buffer.from(head),
    Buffer.from(`\r\ncontent-length: ${payload.length}\r\nconnection: close\r\n\r\n`),
    payload,
  ]);
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error('raw request timed out')));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const headPart = split < 0 ? text : text.slice(0, split);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headPart)?.[1] ?? NaN);
      resolve({ status, head: headPart, body: split < 0 ? '' : text.slice(split + 4) });
    });
    socket.write(request);
  });
}
