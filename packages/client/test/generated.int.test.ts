/**
 * The SDK's REST layer is the API of today: the committed copy of the OpenAPI document is
 * what a node serves, and generating the client again from it gives the committed files,
 * byte for byte. After changing a route or a reply schema, `npm run client:generate`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  generateClient,
  servedAsyncApi,
  servedOpenApi,
  wsProtocolTypes,
} from '../../../src/edge/http/client-generation.js';

const committed = join(import.meta.dirname, '..', 'src', 'generated');
const committedWs = join(import.meta.dirname, '..', 'src', 'generated-ws');

async function filesUnder(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.set(relative(dir, path), await readFile(path, 'utf8'));
  }
  return out;
}

describe('packages/client/src/generated', () => {
  const temp = mkdtemp(join(tmpdir(), 'rooms-client-drift-'));
  after(async () => rm(await temp, { recursive: true, force: true }));

  it('is made from the document the node serves (else: npm run client:generate)', async () => {
    const served = await servedOpenApi();
    const copy = await readFile(join(committed, 'openapi.json'), 'utf8');
    assert.ok(served === copy, 'the served OpenAPI document changed: npm run client:generate');
    const dir = await temp;
    await generateClient(served, dir);
    const made = await filesUnder(dir);
    const kept = await filesUnder(committed);
    kept.delete('openapi.json');
    assert.deepEqual([...kept.keys()].sort(), [...made.keys()].sort());
    for (const [file, text] of made) {
      assert.ok(kept.get(file) === text, `${file} differs: npm run client:generate`);
    }
  });

  it('types the /ws protocol as the node serves it (else: npm run client:generate)', async () => {
    const served = await servedAsyncApi();
    const copy = await readFile(join(committedWs, 'asyncapi.json'), 'utf8');
    assert.ok(served === copy, 'the served AsyncAPI document changed: npm run client:generate');
    const types = await readFile(join(committedWs, 'ws-protocol.gen.ts'), 'utf8');
    assert.ok(types === (await wsProtocolTypes(served)), 'ws-protocol.gen.ts differs');
  });
});
