/**
 * How `packages/client`'s typed layers are made from the documents a node serves: the OpenAPI
 * document goes through @hey-api/openapi-ts (types, one function per operation, its fetch
 * client) into `packages/client/src/generated/`, and the AsyncAPI document's payload schemas
 * through json-schema-to-typescript into `packages/client/src/generated-ws/` (each client
 * event's data, ACK data and refusal reasons; each pushed frame's data). `npm run
 * client:generate` writes both; a test makes them again and fails when the committed files
 * differ (the SDK never drifts from the API).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@hey-api/openapi-ts';
import { compile } from 'json-schema-to-typescript';
import { startTestHttpApp } from '../../main/testing/http-app-harness.js';

/** The served OpenAPI document, as a client team downloads it from `/docs/json`. */
export function servedOpenApi(): Promise<string> {
  return served('/docs/json');
}

/** The served AsyncAPI document of `/ws`. */
export function servedAsyncApi(): Promise<string> {
  return served('/docs/asyncapi.json');
}

async function served(url: string): Promise<string> {
  const app = await startTestHttpApp({});
  try {
    const res = await app.http.inject({ url });
    if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}`);
    // Pretty, so that a change of the API reads as a small diff of the committed copy.
    return `${JSON.stringify(res.json(), null, 2)}\n`;
  } finally {
    await app.close();
  }
}

/** Writes the generated client of `document` (JSON text) into `outputDir`. */
export async function generateClient(document: string, outputDir: string): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'rooms-openapi-'));
  try {
    const input = join(dir, 'openapi.json');
    await writeFile(input, document);
    await createClient({
      input,
      // The package is ESM for Node and browsers alike: imports name their `.js` file.
      output: { path: outputDir, importFileExtension: '.js' },
      plugins: ['@hey-api/typescript', '@hey-api/sdk', '@hey-api/client-fetch'],
      logs: { level: 'silent' },
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

type Schema = Record<string, unknown>;
interface AsyncApiMessage {
  readonly payload: {
    readonly properties?: Record<string, Schema>;
    readonly oneOf?: readonly { readonly properties: Record<string, Schema> }[];
  };
}

/**
 * The TypeScript of the `/ws` protocol: `WsProtocol['client'][event]` is `{data, ack, reason}`
 * of a client event, `WsProtocol['server'][event]` the data of a pushed frame (a union where an
 * event has several shapes). From the AsyncAPI document's messages (src/edge/ws/asyncapi.ts
 * names them `send.<event>`, `ack.<event>`, `frame.<id>`).
 */
export async function wsProtocolTypes(document: string): Promise<string> {
  const messages = (
    JSON.parse(document) as { components: { messages: Record<string, AsyncApiMessage> } }
  ).components.messages;
  const client: Record<string, Record<string, Schema>> = {};
  const server: Record<string, Schema[]> = {};
  for (const [id, { payload }] of Object.entries(messages)) {
    const [kind] = id.split('.', 1);
    const event = id.slice(kind!.length + 1);
    if (kind === 'send')
      (client[event] ??= {}).data = payload.properties?.data ?? { type: 'object' };
    if (kind === 'ack') {
      const [accepted, refused] = payload.oneOf ?? [];
      (client[event] ??= {}).ack = accepted!.properties.data!;
      client[event].reason = refused!.properties.reason!;
    }
    if (kind === 'frame') {
      const name = payload.properties!.event!.const as string;
      (server[name] ??= []).push(payload.properties!.data!);
    }
  }
  const object = (properties: Record<string, Schema>): Schema => ({
    type: 'object',
    additionalProperties: false,
    required: Object.keys(properties),
    properties,
  });
  const schema = object({
    client: object(
      Object.fromEntries(Object.entries(client).map(([event, parts]) => [event, object(parts)])),
    ),
    server: object(
      Object.fromEntries(
        Object.entries(server).map(([event, shapes]) => [
          event,
          shapes.length === 1 ? shapes[0]! : { anyOf: shapes },
        ]),
      ),
    ),
  });
  return compile(schema, 'WsProtocol', {
    bannerComment:
      '/* Made by json-schema-to-typescript from /docs/asyncapi.json (npm run client:generate). */',
    additionalProperties: false,
    strictIndexSignatures: true,
  });
}
