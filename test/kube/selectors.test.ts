import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseLabelSelector } from '#lib/kube/selectors.ts';
import { assertBadRequest } from '../helpers/status.ts';

const web = { app: 'web', tier: 'frontend', replicas: '3' };
const matches = (selector: string, labels: Record<string, string> | undefined = web): boolean =>
  parseLabelSelector(selector).matches(labels);

test('the empty selector matches everything, including objects without labels', () => {
  for (const s of ['', '  \t ']) {
    const sel = parseLabelSelector(s);
    assert.ok(sel.empty);
    assert.ok(sel.matches(undefined));
    assert.ok(sel.matches(web));
    assert.is(sel.toString(), '');
  }
  assert.not.ok(parseLabelSelector('app').empty);
});

test('= and == require the label with that value', () => {
  for (const op of ['=', '==']) {
    assert.ok(matches(`app${op}web`));
    assert.not.ok(matches(`app${op}db`));
    assert.not.ok(matches(`missing${op}web`));
    assert.not.ok(parseLabelSelector(`app${op}web`).matches(undefined));
  }
});

test('an empty exact value matches only an empty label value', () => {
  assert.ok(matches('x=', { x: '' }));
  assert.not.ok(matches('x=', {}));
  assert.ok(matches('x!=,app=web'));
});

test('!= matches a different value or a missing label', () => {
  assert.ok(matches('app!=db'));
  assert.not.ok(matches('app!=web'));
  assert.ok(matches('missing!=web'));
});

test('in and notin test set membership; notin matches a missing label', () => {
  assert.ok(matches('app in (db,web)'));
  assert.not.ok(matches('app in (db)'));
  assert.not.ok(matches('missing in (web)'));
  assert.ok(matches('app notin (db)'));
  assert.not.ok(matches('app notin (db,web)'));
  assert.ok(matches('missing notin (web)'));
});

test('empty members of a value set match the empty value', () => {
  for (const s of ['x in ()', 'x in (,)', 'x in (a,)', 'x in (,a)', 'x in (a,,b)']) {
    assert.ok(matches(s, { x: '' }), s);
  }
  assert.equal(parseLabelSelector('x in (b,,a,b)').requirements[0]?.values, ['', 'a', 'b']);
});

test('a bare key requires the label and !key forbids it', () => {
  assert.ok(matches('tier'));
  assert.not.ok(matches('missing'));
  assert.ok(matches('!missing'));
  assert.not.ok(matches('!tier'));
  assert.ok(parseLabelSelector('!missing').matches(undefined));
});

test('> and < compare integer label values and fail on missing or non-integer labels', () => {
  assert.ok(matches('replicas>2'));
  assert.not.ok(matches('replicas>3'));
  assert.ok(matches('replicas<4'));
  assert.not.ok(matches('replicas<3'));
  assert.ok(matches('n>9007199254740993', { n: '9007199254740994' }), 'compares int64s exactly');
  assert.ok(matches('n<0', { n: '-5' }));
  assert.not.ok(matches('missing<4'));
  assert.not.ok(matches('app>1'));
  assert.not.ok(matches('n>1', { n: '99999999999999999999' }), 'out of int64 range');
});

test('requirements are ANDed, whitespace is tolerated and the canonical form is sorted', () => {
  const sel = parseLabelSelector('  tier notin(db) , app in ( web,api ) ,!gone,replicas>1 , x==y,z ');
  assert.is(sel.toString(), 'app in (api,web),!gone,replicas>1,tier notin (db),x==y,z');
  assert.equal(
    sel.requirements.map((r) => r.operator),
    ['in', '!', 'gt', 'notin', '==', 'exists'],
  );
  assert.not.ok(sel.matches(web));
  assert.ok(sel.matches({ ...web, x: 'y', z: '' }));
});

test('in and notin are identifiers in key and value position', () => {
  assert.ok(matches('in in (in,notin)', { in: 'notin' }));
  assert.ok(matches('notin=in', { notin: 'in' }));
});

test('prefixed keys are accepted', () => {
  assert.ok(matches('app.kubernetes.io/name=web', { 'app.kubernetes.io/name': 'web' }));
});

const nameRule =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const valueRule =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const prefixRule =
  "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const long = 'a'.repeat(64);
const req = (m: string): string => `unable to parse requirement: ${m}`;

const rejected: [string, string][] = [
  // the selector's own structure
  [',a', "found ',', expected: !, identifier, or 'end of string'"],
  ['(a)', "found '(', expected: !, identifier, or 'end of string'"],
  ['!=a', "found '!=', expected: !, identifier, or 'end of string'"],
  ['a=b c', "found 'c', expected: ',' or 'end of string'"],
  ['a in (b))', "found ')', expected: ',' or 'end of string'"],
  ['a,', "found '', expected: identifier after ','"],
  ['a,,b', "found ',', expected: identifier after ','"],
  // keys
  ['!(a)', req("found '(', expected: identifier")],
  ['!a=b', req("found 'a', expected: ',' or 'end of string'")],
  ['a@b=c', req(`<nil>: Invalid value: "a@b": name part ${nameRule}`)],
  ['-a', req(`<nil>: Invalid value: "-a": name part ${nameRule}`)],
  [long, req(`<nil>: Invalid value: "${long}": name part must be no more than 63 bytes`)],
  ['/a', req('<nil>: Invalid value: "/a": prefix part must be non-empty')],
  ['a/', req(`<nil>: Invalid value: "a/": name part must be non-empty; name part ${nameRule}`)],
  ['Example.com/a', req(`<nil>: Invalid value: "Example.com/a": ${prefixRule}`)],
  [
    `${'a'.repeat(254)}/a`,
    req(`<nil>: Invalid value: "${'a'.repeat(254)}/a": prefix part must be no more than 253 bytes`),
  ],
  [
    'a/b/c',
    req(
      `<nil>: Invalid value: "a/b/c": a valid label key ${nameRule} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ),
  ],
  // operators
  ['a b', req("found 'b', expected: in, notin, =, ==, !=, gt, lt")],
  ['a !b', req("found '!', expected: in, notin, =, ==, !=, gt, lt")],
  ['a (b)', req("found '(', expected: in, notin, =, ==, !=, gt, lt")],
  // value sets
  ['a in b', req("found 'b' expected: '('")],
  ['a notin', req("found '' expected: '('")],
  ['a in (', req("found '', expected: ',', ')' or identifier")],
  ['a in (=)', req("found '=', expected: ',', ')' or identifier")],
  ['a in (x y)', req("found 'y', expected: ',' or ')'")],
  ['a in (x', req("found '', expected: ',' or ')'")],
  ['a in (x,=)', req("found '=', expected: ',', or identifier")],
  ['a in (x,,)', req("found ')', expected: ',', or identifier")],
  // exact values
  ['a=(b)', req("found '(', expected: identifier")],
  ['a>=1', req("found '=', expected: identifier")],
  ['a>b', req(`values[0]: Invalid value: "b": for 'Gt', 'Lt' operators, the value must be an integer`)],
  ['a<', req(`values[0]: Invalid value: "": for 'Gt', 'Lt' operators, the value must be an integer`)],
  [
    'a<9223372036854775808',
    req(
      `values[0]: Invalid value: "9223372036854775808": for 'Gt', 'Lt' operators, the value must be an integer`,
    ),
  ],
  ['a=-x', req(`values[0][a]: Invalid value: "-x": ${valueRule}`)],
  ['a!=x_', req(`values[0][a]: Invalid value: "x_": ${valueRule}`)],
  [`a=${long}`, req(`values[0][a]: Invalid value: "${long}": must be no more than 63 bytes`)],
  [
    'a in (ok,-x,y-)',
    req(`[values[0][a]: Invalid value: "-x": ${valueRule}, values[2][a]: Invalid value: "y-": ${valueRule}]`),
  ],
  ['a>-1', req(`values[0][a]: Invalid value: "-1": ${valueRule}`)],
];

for (const [selector, message] of rejected) {
  test(`rejects ${JSON.stringify(selector.length > 40 ? `${selector.slice(0, 40)}…` : selector)}`, () => {
    assertBadRequest(() => parseLabelSelector(selector), message);
  });
}

test('a NUL byte ends the selector like the end of the string', () => {
  assert.ok(matches('app=web\0', web));
  assertBadRequest(
    () => parseLabelSelector('a\0b'),
    req("found 'b', expected: in, notin, =, ==, !=, gt, lt"),
  );
});

test.run();
