/**
 * `npm run client:generate`: remakes packages/client/src/generated/ (and the copy of the
 * document beside it) from the OpenAPI document the node serves. Run it after changing a
 * route, a declaration or a reply schema; the client-drift test fails until it is run.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateClient, servedOpenApi } from '../src/edge/http/client-generation.js';

const target = join(import.meta.dirname, '..', 'packages', 'client', 'src', 'generated');
const document = await servedOpenApi();
await rm(target, { recursive: true, force: true });
await generateClient(document, target);
await writeFile(join(target, 'openapi.json'), document);
process.stderr.write(`generated ${target}\n`);
