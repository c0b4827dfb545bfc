import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderRoutes, toPath } from '../scripts/gen-routes.ts';

test('routes/_table.gen.ts is up to date with the files under routes/ (run `npm run gen`)', () => {
  const committed = readFileSync(join(import.meta.dirname, '../routes/_table.gen.ts'), 'utf8');
  assert.is(committed, renderRoutes());
});

test('file names map to URL patterns', () => {
  assert.is(toPath('api/v1/namespaces/[ns]/pods/[name]/index.ts'), '/api/v1/namespaces/:ns/pods/:name');
  assert.is(toPath('version.ts'), '/version');
  assert.is(toPath('pods/[ns]/[name]/restart.ts'), '/pods/:ns/:name/restart');
});

test.run();
