import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { METHODS } from '#lib/app.ts';
import { routes } from '#routes/_table.gen.ts';
import { exportedMethods, renderRoutes, toPath } from '../scripts/gen-routes.ts';

test('routes/_table.gen.ts is up to date with the files under routes/ (run `npm run gen`)', () => {
  const committed = readFileSync(join(import.meta.dirname, '../routes/_table.gen.ts'), 'utf8');
  assert.is(committed, renderRoutes());
});

test('file names map to URL patterns', () => {
  assert.is(toPath('api/v1/namespaces/[ns]/pods/[name]/index.ts'), '/api/v1/namespaces/:ns/pods/:name');
  assert.is(toPath('version.ts'), '/version');
  assert.is(toPath('pods/[ns]/[name]/restart.ts'), '/pods/:ns/:name/restart');
});

test('every route lists exactly the methods its file exports, and loads', async () => {
  for (const route of routes) {
    const module = await route.load();
    const exported = METHODS.filter((m) => module[m] !== undefined);
    assert.equal([...route.methods], exported, route.path);
  }
});

test('methods are read from both export forms; a file with none is refused', () => {
  assert.equal(exportedMethods('export const GET = f;\nexport const POST = [a, b];\n'), ['GET', 'POST']);
  assert.equal(exportedMethods("export { GET, PUT as PATCH } from '../x.ts';\n"), ['GET', 'PATCH']);
  assert.throws(
    () => exportedMethods('export const helper = 1;\n', 'routes/x.ts'),
    /routes\/x.ts exports no handler/,
  );
});

test.run();
