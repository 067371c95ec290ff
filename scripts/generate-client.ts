/**
 * `npm run client:generate`: remakes packages/client/src/generated/ (the REST client, from the
 * OpenAPI document) and packages/client/src/generated-ws/ (the `/ws` protocol's types, from
 * the AsyncAPI document), with a copy of each document beside them. Run it after changing a
 * route, a declaration or a reply schema; the client-drift test fails until it is run.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  generateClient,
  servedAsyncApi,
  servedOpenApi,
  wsProtocolTypes,
} from '../src/edge/http/client-generation.js';

const src = join(import.meta.dirname, '..', 'packages', 'client', 'src');
const rest = join(src, 'generated');
const openapi = await servedOpenApi();
await rm(rest, { recursive: true, force: true });
await generateClient(openapi, rest);
await writeFile(join(rest, 'openapi.json'), openapi);

const ws = join(src, 'generated-ws');
const asyncapi = await servedAsyncApi();
await rm(ws, { recursive: true, force: true });
await mkdir(ws);
await writeFile(join(ws, 'ws-protocol.gen.ts'), await wsProtocolTypes(asyncapi));
await writeFile(join(ws, 'asyncapi.json'), asyncapi);
process.stderr.write(`generated ${rest} and ${ws}\n`);
