// Manifest files for tests and benchmarks: ordinary ones and the hostile kinds issue 18 names.

/** A one-container Pod. */
export const podManifest = (name: string, image = 'busybox:1.36') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  containers:
    - name: main
      image: ${image}
`;

/** The "billion laughs": nine levels of nine aliases each, a few hundred bytes of YAML. */
export function aliasBomb(): string {
  let text = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\nl0: &l0 ["lol"]\n';
  for (let i = 1; i <= 9; i++)
    text += `l${i}: &l${i} [${Array(9)
      .fill(`*l${i - 1}`)
      .join(', ')}]\n`;
  return `${text}data: {x: *l9}\n`;
}

/** `n` ConfigMaps of one value of about `bytes` bytes each. */
export function configMaps(n: number, bytes: number, prefix = 'big'): string {
  const docs: string[] = [];
  for (let i = 0; i < n; i++)
    docs.push(
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${prefix}-${i}}\ndata:\n  x: ${'a'.repeat(bytes - 80)}\n`,
    );
  return docs.join('---\n');
}

/** `n` small ConfigMaps, as documents or as the items of one List. */
export function manyObjects(n: number, o: { list?: boolean } = {}): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++)
    out.push(
      o.list
        ? `- {apiVersion: v1, kind: ConfigMap, metadata: {name: cm-${i}}, data: {k: v}}\n`
        : `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\ndata:\n  k: v\n`,
    );
  return o.list ? `apiVersion: v1\nkind: List\nitems:\n${out.join('')}` : out.join('---\n');
}
