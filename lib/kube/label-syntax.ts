// Label key and value syntax, with the apiserver's wording (apimachinery `api/validate/content`), so a
// rejected selector reads the same as it would against a real cluster.

const nameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const nameMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const valueFmt = `(${nameFmt})?`;
const valueMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const dnsLabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const subdomainFmt = `${dnsLabelFmt}(\\.${dnsLabelFmt})*`;
const subdomainMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

const nameRe = new RegExp(`^${nameFmt}$`);
const valueRe = new RegExp(`^${valueFmt}$`);
const subdomainRe = new RegExp(`^${subdomainFmt}$`);

// Limits count bytes, as Go's len() does.
const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
const maxLen = (n: number): string => `must be no more than ${n} bytes`;

// Upstream's RegexError, double space after each example's comma included.
const regexError = (msg: string, fmt: string, ...examples: string[]): string =>
  `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;

/** Why a label key (`[prefix/]name`) is invalid; empty when it is valid. */
export function labelKeyErrors(key: string): string[] {
  const errs: string[] = [];
  const parts = key.split('/');
  if (parts.length > 2) {
    return [
      `a valid label key ${regexError(nameMsg, nameFmt, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  const name = parts.length === 2 ? (parts[1] ?? '') : key;
  if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    if (prefix === '') errs.push('prefix part must be non-empty');
    else {
      if (bytes(prefix) > 253) errs.push(`prefix part ${maxLen(253)}`);
      if (!subdomainRe.test(prefix))
        errs.push(`prefix part ${regexError(subdomainMsg, subdomainFmt, 'example.com')}`);
    }
  }
  if (name === '') errs.push('name part must be non-empty');
  else if (bytes(name) > 63) errs.push(`name part ${maxLen(63)}`);
  if (!nameRe.test(name))
    errs.push(`name part ${regexError(nameMsg, nameFmt, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

/** Why a label value is invalid; empty when it is valid (the empty string is a valid value). */
export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (bytes(value) > 63) errs.push(maxLen(63));
  if (!valueRe.test(value)) errs.push(regexError(valueMsg, valueFmt, 'MyValue', 'my_value', '12345'));
  return errs;
}
