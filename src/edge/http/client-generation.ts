/**
 * How `packages/client`'s REST layer is made: the OpenAPI document a node serves goes
 * through @hey-api/openapi-ts (types, one function per operation, its fetch client), into
 * `packages/client/src/generated/`. `npm run client:generate` writes it; a test makes it
 * again and fails when the committed files differ (the SDK never drifts from the API).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@hey-api/openapi-ts';
import { startTestHttpApp } from '../../main/testing/http-app-harness.js';

/** The served document, as a client team downloads it from `/docs/json`. */
export async function servedOpenApi(): Promise<string> {
  const app = await startTestHttpApp({});
  try {
    const res = await app.http.inject({ url: '/docs/json' });
    if (res.statusCode !== 200) throw new Error(`/docs/json answered ${res.statusCode}`);
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
